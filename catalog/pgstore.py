"""The catalog on PostgreSQL (``postgresql://...``, psycopg 3), for several servers on one catalog.

Like the SQLite store, one connection writes, shared by the process's threads under a lock;
reads take a connection of SQLAlchemy's pool (autocommit, checked before use, so a read after
the database restarted gets a new one). Statements are Core constructs compiled by SQLAlchemy's
psycopg dialect: nothing rewrites SQL text. A write transaction starts by taking one
transaction-level advisory lock, so writers of every server run one after the other, as
SQLite's ``BEGIN IMMEDIATE`` makes them: under READ COMMITTED every statement after the lock
sees every earlier writer's commit, so the checks a change makes (the last administrator, a
name already taken) read the current catalog.

Other servers' changes are noticed by LISTEN/NOTIFY, not by asking the database at every
snapshot access (a network round trip each): a change announces its catalog version on commit,
and a listening thread counts the notices and has the snapshot reloaded at once (so a user
disabled on another server loses its sockets here too). If the listening connection is lost,
every access asks the database again (as polling would) until it is back.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from boxes import codes
from boxes.errors import InvalidInput
from catalog import repository
from catalog.store import Store

log = logging.getLogger(__name__)
CHANNEL = "sluice_catalog"
WRITE_LOCK = 0x51CE_CA7A  # pg_advisory_xact_lock's key: the catalog's one write lock
RECONNECT_SECONDS = 1.0
LISTENER = "sluice catalog notices"


def _storable(params: Any) -> None:
    """PostgreSQL's text cannot hold NUL: such a value is bad input, not a server error."""
    rows = params if isinstance(params, list) else [params]
    for row in rows:
        values = row.values() if isinstance(row, dict) else row or ()
        if any(isinstance(v, str) and "\0" in v for v in values):
            raise InvalidInput(code=codes.INVALID_INPUT, reason="text with a NUL character")


def _engine(url: str, name: str, **options: Any) -> Engine:
    """An engine of psycopg 3 connections named ``name`` (pg_stat_activity tells which of a
    server's connections is which)."""
    engine = create_engine(
        make_url(url).set(drivername="postgresql+psycopg"),
        connect_args={"application_name": name},
        pool_pre_ping=True,
        **options,
    )

    @event.listens_for(engine, "before_cursor_execute")
    def _check(conn, cursor, statement, parameters, context, executemany) -> None:
        _storable(parameters)

    return engine


class PgStore(Store):
    exact = False  # another server's commit is known here once its notice arrives

    def __init__(self, url: str) -> None:
        self.url = url
        self.lock = threading.RLock()
        self.engine = _engine(url, "sluice catalog writer", pool_size=1, max_overflow=0)
        self.dialect = self.engine.dialect
        self._readers = _engine(
            url, "sluice catalog reader", isolation_level="AUTOCOMMIT", pool_size=4
        )
        self.conn = self.engine.connect()
        self._notices = 0  # notices received (and reconnections of the listener)
        self._noticed = -1  # the newest catalog version a notice announced
        self._listening = False
        self._closing = False
        # This store's name: the channel that ends its listener, and the sender of its notices.
        self._stop = f"{CHANNEL}_{secrets.token_hex(8)}"
        self._cond = threading.Condition()
        self._on_notice: Callable[[], None] | None = None
        try:
            self.migrate()
            self._check_collation()
        except BaseException:
            self._dispose()
            raise
        self._listener = threading.Thread(target=self._listen, name="catalog-notices", daemon=True)
        self._listener.start()
        with self._cond:
            self._cond.wait_for(lambda: self._listening, timeout=10)

    def _check_collation(self) -> None:
        """Names sort in byte order on SQLite; a database with another collation lists them in
        another order (nothing else changes)."""
        with self.reader() as conn:
            collation = repository.collation(conn)
        if collation not in ("C", "POSIX", "C.UTF-8", "C.utf8"):
            log.warning(
                "the catalog database sorts text by %r, not in byte order as SQLite does"
                " (create it with --locale=C to list names in the same order)",
                collation,
            )

    @contextmanager
    def transaction(self) -> Iterator:
        """All or nothing, after every earlier writer of any server (the advisory lock)."""
        with self.lock, self.conn.begin():
            repository.lock_catalog(self.conn, WRITE_LOCK)
            yield self.conn

    def announce(self, conn, version: int) -> None:
        """NOTIFY is delivered at commit, and not at all after a rollback."""
        repository.notify(conn, CHANNEL, f"{version} {self._stop}")

    @property
    def listening(self) -> bool:
        return self._listening

    def data_version(self) -> int:
        """The notices counted so far; while not listening, a new number at every call."""
        with self._cond:
            if not self._listening:
                self._notices += 1
            return self._notices

    def settle(self, timeout: float = 10.0) -> None:
        """Return once the notice of every change committed before the call has arrived."""
        with self.reader() as conn:
            version = repository.catalog_version(conn)
        with self._cond:
            if not self._cond.wait_for(lambda: self._noticed >= version, timeout):
                raise TimeoutError(f"no notice of catalog version {version} in {timeout} s")

    def _listen(self) -> None:
        while not self._closing:
            try:
                with psycopg.connect(self.url, autocommit=True, application_name=LISTENER) as conn:
                    conn.execute(f"LISTEN {CHANNEL}; LISTEN {self._stop}")
                    with self.reader() as reader:
                        self._heard(repository.catalog_version(reader), listening=True)
                    for notice in conn.notifies():
                        if notice.channel == self._stop:
                            return
                        version, _, sender = notice.payload.partition(" ")
                        # This store's own change is in its snapshot already: only counted
                        # for ``settle``, not worth a look at the database.
                        ours = sender == self._stop
                        self._heard(int(version), listening=True, counted=not ours)
                        if not ours:
                            self._push()
            except (psycopg.Error, DBAPIError) as err:
                if self._closing:
                    return
                log.error("catalog notices lost, asking at every access until back: %s", err)
            self._heard(-1, listening=False)
            with self._cond:
                self._cond.wait(RECONNECT_SECONDS)

    def on_notice(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` in the listening thread after each notice."""
        self._on_notice = callback

    def _push(self) -> None:
        if self._on_notice is None or self._closing:
            return
        try:
            self._on_notice()
        except Exception:  # the next access tries again; the listener must go on
            log.exception("reloading the catalog after a notice failed")

    def _heard(self, version: int, listening: bool, counted: bool = True) -> None:
        with self._cond:
            self._notices += counted
            self._noticed = max(self._noticed, version)
            self._listening = listening
            self._cond.notify_all()

    @contextmanager
    def reader(self) -> Iterator[Connection]:
        """A pooled connection for one quick read, in autocommit."""
        with self._readers.connect() as conn:
            yield conn

    def close(self) -> None:
        """Stop the listener first (not under the lock: it may be reloading), then close."""
        with self.lock:
            self._closing = True
            if self._listener.is_alive():
                with self.conn.begin():
                    repository.notify(self.conn, self._stop, "")
        with self._cond:
            self._cond.notify_all()
        self._listener.join(timeout=10)
        with self.lock:
            self._dispose()

    def _dispose(self) -> None:
        self.conn.close()
        self.engine.dispose()
        self._readers.dispose()
