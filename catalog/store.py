"""Where the catalog lives: the database's connections, its transactions, its migrations and
the notices of other processes' changes.

:func:`open_store` picks the database by URL: ``sqlite:///PATH`` (the default, a file in the data
directory; ``sqlite:///:memory:`` for tests of one process) or ``postgresql://...``
(``catalog.pgstore``, several servers on one catalog). Any other URL is refused with
``UNSUPPORTED_DATABASE``. Both are SQLAlchemy engines: the statements (``catalog.repository``)
are Core constructs each database's dialect compiles. Every write runs in one transaction that
holds the whole database's write lock (SQLite's ``BEGIN IMMEDIATE``, PostgreSQL's advisory
lock), so a failed change leaves nothing behind and writers, in any process, run one after the
other. The migrations (``catalog.migrations``) run in the first such transaction.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.pool import StaticPool

from boxes import codes
from boxes.errors import InvalidInput
from catalog import migrations, repository


def sqlite_path(url: str) -> str:
    """The file a ``sqlite:///path`` URL names (``sqlite:///:memory:`` for tests of one process)."""
    prefix = "sqlite:///"
    if not url.startswith(prefix) or len(url) == len(prefix):
        raise InvalidInput(code=codes.UNSUPPORTED_DATABASE, url=url[:60])
    return url[len(prefix) :]


def open_store(url: str) -> Store:
    """The store a catalog URL names."""
    if url.startswith(("postgresql://", "postgres://")):
        from catalog.pgstore import PgStore

        return PgStore(url)
    return Store(url)


def _sqlite_engine(path: str, writer: bool) -> Engine:
    """The writer's engine begins every transaction with ``BEGIN IMMEDIATE`` (the write lock
    at once, not at the first write, so a transaction never fails halfway for a lock) and
    keeps the file's durability (``synchronous`` stays FULL); the reader's reads in
    autocommit, so it never holds a snapshot of the file open."""
    memory = path == ":memory:"
    engine = create_engine(
        f"sqlite:///{path}",
        connect_args={"check_same_thread": False, "timeout": 30},
        poolclass=StaticPool if memory else None,
        **({} if writer else {"isolation_level": "AUTOCOMMIT"}),
    )
    if writer:

        @event.listens_for(engine, "connect")
        def _prepare(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.isolation_level = None  # transactions are begun by the event below
            dbapi_conn.execute("PRAGMA foreign_keys = ON")
            if not memory:
                dbapi_conn.execute("PRAGMA journal_mode = WAL")

        @event.listens_for(engine, "begin")
        def _begin(conn: Connection) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


class Store:
    """One SQLite connection writes, shared by the process's threads under a lock; a second
    one reads.

    Other processes' commits are noticed by ``PRAGMA data_version`` on the reading
    connection, asked at every snapshot access (a local file: microseconds).
    """

    exact = True  # data_version tells every commit, another process's too, at once

    def __init__(self, url: str) -> None:
        path = sqlite_path(url)
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.lock = threading.RLock()
        self.engine = _sqlite_engine(path, writer=True)
        self.dialect = self.engine.dialect
        self.conn = self.engine.connect()
        # A second connection only reads and notices commits, so that neither waits for a
        # writer. In memory there is nobody else to notice, and one connection.
        self._probe: Connection | None = None
        self._probe_lock = threading.Lock()
        if path != ":memory:":
            self._reader_engine = _sqlite_engine(path, writer=False)
            self._probe = self._reader_engine.connect()
            self._poll = self._probe.connection.dbapi_connection
        self.migrate()

    def revision(self) -> str | None:
        """The Alembic revision the catalog is at."""
        with self.reader() as conn:
            return migrations.revision(conn)

    def migrate(self) -> None:
        with self.transaction() as conn:
            migrations.upgrade(conn)

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """All or nothing: commit if the block returns, roll back if it raises."""
        with self.lock, self.conn.begin():
            yield self.conn

    def announce(self, conn: Connection, version: int) -> None:
        """Tell other processes, at commit, that the catalog is now at ``version``: SQLite's
        ``data_version`` tells them without being asked."""

    def on_notice(self, callback) -> None:
        """Call ``callback()`` when another process's commit is heard of: SQLite's are only
        found at the next ``data_version``."""

    def data_version(self) -> int:
        """Changes whenever anyone, this process included, commits to the file."""
        if self._probe is None:
            return 0
        with self._probe_lock:
            return repository.data_version(self._poll)

    def settle(self, timeout: float = 10.0) -> None:
        """Return once every change committed before the call can be noticed: at once here."""

    @contextmanager
    def reader(self) -> Iterator[Connection]:
        """A connection for one quick read that does not wait for a writer."""
        if self._probe is None:
            with self.transaction() as conn:
                yield conn
            return
        with self._probe_lock:
            yield self._probe

    def close(self) -> None:
        with self.lock:
            self.conn.close()
            self.engine.dispose()
            if self._probe is not None:
                self._probe.close()
                self._reader_engine.dispose()
