"""Where the catalog lives: one database connection, its migrations, and its transactions.

Only SQLite is implemented (``sqlite:///data/catalog.db``); any other URL is refused with
``UNSUPPORTED_DATABASE``. The rest of the catalog uses SQLite directly (``sqlite3``
connections, its SQL dialect, ``PRAGMA data_version`` to notice other processes' commits,
the change-tracking triggers of ``changelog.py``), so PostgreSQL needs more than another
``Store``. Every write runs in one ``BEGIN IMMEDIATE`` transaction, so a failed change leaves
nothing behind.
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


def migrations() -> list[tuple[int, str]]:
    """The numbered migration scripts shipped in ``catalog/migrations``, in order."""
    folder = resources.files("catalog") / "migrations"
    scripts = sorted((p for p in folder.iterdir() if p.name.endswith(".sql")), key=lambda p: p.name)
    return [(int(p.name.split("_", 1)[0]), p.read_text(encoding="utf-8")) for p in scripts]


def sqlite_path(url: str) -> str:
    """The file a ``sqlite:///path`` URL names (``sqlite:///:memory:`` for tests of one process)."""
    prefix = "sqlite:///"
    if not url.startswith(prefix) or len(url) == len(prefix):
        raise InvalidInput(code=codes.UNSUPPORTED_DATABASE, url=url[:60])
    return url[len(prefix) :]


class Store:
    """One SQLite connection shared by the process's threads, serialised by a lock."""

    def __init__(self, url: str) -> None:
        path = sqlite_path(url)
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.lock = threading.RLock()
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
        self.conn.execute("PRAGMA foreign_keys = ON")
        # A second connection only notices commits, so that noticing never waits for a writer.
        # In memory there is nobody else to notice.
        self._probe = None
        self._probe_lock = threading.Lock()
        if path != ":memory:":
            self.conn.execute("PRAGMA journal_mode = WAL")
            self._probe = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.migrate()

    def migrate(self) -> None:
        with self.lock:
            current = self.conn.execute("PRAGMA user_version").fetchone()[0]
            for number, script in migrations():
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
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """All or nothing: commit if the block returns, roll back if it raises."""
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def data_version(self) -> int:
        """Changes whenever anyone, this process included, commits to the file."""
        if self._probe is None:
            return 0
        with self._probe_lock:
            return self._probe.execute("PRAGMA data_version").fetchone()[0]

    @contextmanager
    def reader(self) -> Iterator[sqlite3.Connection]:
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
