"""Where the catalog lives: a database connection, its migrations, its transactions and the
notices of other processes' changes.

:func:`open_store` picks the database by URL: ``sqlite:///PATH`` (the default, a file in the data
directory; ``sqlite:///:memory:`` for tests of one process) or ``postgresql://...``
(``catalog.pgstore``, several servers on one catalog). Any other URL is refused with
``UNSUPPORTED_DATABASE``. Every write runs in one transaction that holds the whole database's
write lock (SQLite's ``BEGIN IMMEDIATE``, PostgreSQL's advisory lock), so a failed change leaves
nothing behind and writers, in any process, run one after the other.

Migrations are one numbered series, ``NNNN_name.sql``, written in the SQL both databases accept
with SQLite's type names (``catalog.dialect`` widens them for PostgreSQL). Where a step must
differ, ``NNNN_name.sqlite.sql`` and ``NNNN_name.postgresql.sql`` beside it (or instead of it)
replace it for that database.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

from boxes import codes
from boxes.errors import InvalidInput
from catalog.dialect import POSTGRESQL, SQLITE, Dialect, SqliteConnection

DIALECTS = (SQLITE, POSTGRESQL)


def migrations(dialect: Dialect = SQLITE) -> list[tuple[int, str]]:
    """The numbered migration scripts of ``catalog/migrations`` for ``dialect``, in order."""
    folder = resources.files("catalog") / "migrations"
    common: dict[int, str] = {}
    own: dict[int, dict[str, str]] = {}
    for path in folder.iterdir():
        if not path.name.endswith(".sql"):
            continue
        number = int(path.name.split("_", 1)[0])
        stem, _, suffix = path.name[: -len(".sql")].rpartition(".")
        if stem and suffix in {d.name for d in DIALECTS}:
            own.setdefault(number, {})[suffix] = path.read_text(encoding="utf-8")
        else:
            common[number] = dialect.ddl(path.read_text(encoding="utf-8"))
    found = []
    for number in sorted(common.keys() | own.keys()):
        script = own.get(number, {}).get(dialect.name, common.get(number))
        if script is None:
            raise RuntimeError(f"migration {number} has no script for {dialect.name}")
        found.append((number, script))
    return found


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


class Store:
    """One SQLite connection shared by the process's threads, serialised by a lock.

    Other processes' commits are noticed by ``PRAGMA data_version`` on a second connection,
    asked at every snapshot access (a local file: microseconds).
    """

    exact = True  # data_version tells every commit, another process's too, at once

    dialect = SQLITE

    def __init__(self, url: str) -> None:
        path = sqlite_path(url)
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.lock = threading.RLock()
        self.conn = self._connect(path, timeout=30)
        self.conn.execute("PRAGMA foreign_keys = ON")
        # A second connection only notices commits, so that noticing never waits for a writer.
        # In memory there is nobody else to notice.
        self._probe = None
        self._probe_lock = threading.Lock()
        if path != ":memory:":
            self.conn.execute("PRAGMA journal_mode = WAL")
            self._probe = self._connect(path)
        self.migrate()

    @staticmethod
    def _connect(path: str, **options) -> SqliteConnection:
        return sqlite3.connect(
            path,
            isolation_level=None,
            check_same_thread=False,
            factory=SqliteConnection,
            **options,
        )

    def schema_version(self) -> int:
        return self.conn.execute("PRAGMA user_version").fetchone()[0]

    def migrate(self) -> None:
        with self.lock:
            current = self.schema_version()
            for number, script in migrations(self.dialect):
                if number <= current:
                    continue
                try:
                    self.conn.executescript(
                        f"BEGIN IMMEDIATE;\n{script}\nPRAGMA user_version = {number};\nCOMMIT;"
                    )
                except sqlite3.Error:
                    if self.conn.in_transaction:
                        self.conn.execute("ROLLBACK")
                    raise

    @contextmanager
    def transaction(self) -> Iterator:
        """All or nothing: commit if the block returns, roll back if it raises."""
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def announce(self, conn, version: int) -> None:
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
            return self._probe.execute("PRAGMA data_version").fetchone()[0]

    def settle(self, timeout: float = 10.0) -> None:
        """Return once every change committed before the call can be noticed: at once here."""

    @contextmanager
    def reader(self) -> Iterator:
        """A connection for one quick read that does not wait for a writer."""
        if self._probe is None:
            with self.lock:
                yield self.conn
            return
        with self._probe_lock:
            yield self._probe

    def close(self) -> None:
        with self.lock:
            self.conn.close()
            if self._probe is not None:
                self._probe.close()
