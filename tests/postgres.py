"""A throwaway PostgreSQL cluster for the tests: Debian's ``initdb`` and ``pg_ctl`` in a temporary
directory, reached only by a unix socket there (no TCP port, no root, no password).

One cluster serves the whole pytest session, and one database, migrated once, every test: each
test empties it (DELETE, identities restarted, then the rows the migrations seed), which costs
tens of milliseconds where TRUNCATE costs 200 and copying a template database 500. Durability
is switched off: a crash loses nothing the tests keep.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import psycopg

from catalog.store import open_store

APT_PACKAGE = "postgresql"
USER = "sluice"
CATALOG, BLANK = "catalog", "blank"
TABLES = "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
SEQUENCES = "SELECT relname FROM pg_class WHERE relkind = 'S'"  # identities' too
# A catalog a failed test left open must not see (or lock) the next test's rows.
LEFTOVERS = (
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
)
FAST = "-c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off"


def binaries() -> Path | None:
    """The newest ``/usr/lib/postgresql/N/bin`` with initdb and pg_ctl, if any."""
    found = [
        p.parent
        for p in Path("/usr/lib/postgresql").glob("*/bin/pg_ctl")
        if (p.parent / "initdb").exists() and p.parent.parent.name.isdigit()
    ]
    return max(found, key=lambda p: int(p.parent.name), default=None)


def missing_message() -> str:
    return (
        "PostgreSQL's initdb and pg_ctl were not found under /usr/lib/postgresql/*/bin; the "
        f"catalog tests need them: install Debian's `{APT_PACKAGE}` package "
        f"(apt-get install -y {APT_PACKAGE}; .ci/run does)"
    )


def _owner() -> dict:
    """initdb refuses to run as root: as root, the cluster belongs to Debian's ``postgres``."""
    if os.geteuid() != 0:
        return {}
    account = pwd.getpwnam("postgres")  # made by the postgresql package
    return {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}


class Cluster:
    def __init__(self, bin_dir: Path) -> None:
        self.bin = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="sluice-pg-"))
        self.data = self.root / "data"
        self._owner = _owner()
        if self._owner:
            os.chown(self.root, self._owner["user"], self._owner["group"])

    def _run(self, tool: str, *args: str) -> None:
        subprocess.run(
            [str(self.bin / tool), *args],
            check=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            **self._owner,
        )

    def start(self) -> Cluster:
        self._run("initdb", "-D", str(self.data), "-U", USER, "--auth=trust", "-E", "UTF8",
                  "--no-locale", "--no-sync")  # fmt: skip
        options = f"-k {self.root} {FAST}"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-o", options,
                  "-w", "start")  # fmt: skip
        return self

    def url(self, database: str) -> str:
        return f"postgresql://{USER}@/{database}?host={self.root}"

    def sql(self, statement: str, database: str = "postgres") -> None:
        with psycopg.connect(self.url(database), autocommit=True) as conn:
            conn.execute(statement)

    def prepare(self) -> Cluster:
        """The catalog database, migrated, with the rows its migrations seed kept aside, and
        the blank one."""
        for database in (CATALOG, BLANK):
            self.sql(f"CREATE DATABASE {database}")
        open_store(self.url(CATALOG)).close()
        with psycopg.connect(self.url(CATALOG), autocommit=True) as conn:
            tables = [name for (name,) in conn.execute(TABLES)]
            sequences = [name for (name,) in conn.execute(SEQUENCES)]
            self._seeds = {t: conn.execute(f"SELECT * FROM {t}").fetchall() for t in tables}
        # Without foreign-key (and change-tracking) triggers, so in any order.
        self._empty = "; ".join(
            [
                "SET LOCAL session_replication_role = replica",
                *(f"DELETE FROM {t}" for t in tables),
                *(f"ALTER SEQUENCE {s} RESTART" for s in sequences),
            ]
        )
        return self

    def fresh(self) -> str:
        """The catalog database as its migrations left it: the previous test's is gone."""
        with psycopg.connect(self.url(CATALOG), autocommit=True) as conn:
            conn.execute(LEFTOVERS)
            with conn.transaction():
                conn.execute(self._empty)
                for table, rows in self._seeds.items():
                    if rows:
                        marks = ", ".join(["%s"] * len(rows[0]))
                        with conn.cursor() as cur:
                            cur.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
        return self.url(CATALOG)

    def blank(self) -> str:
        """A database without a table."""
        with psycopg.connect(self.url(BLANK), autocommit=True) as conn:
            conn.execute(LEFTOVERS)
            conn.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
        return self.url(BLANK)

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
