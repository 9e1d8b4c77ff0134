"""The stores' own statements: SQLite's pragmas, PostgreSQL's locks, notices and settings, and
the marker of the migrations of before Alembic (``catalog.migrations``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import BigInteger, Column, MetaData, Table, column, func, inspect, select, table

_LEGACY = Table("schema_version", MetaData(), Column("version", BigInteger, nullable=False))
_PG_DATABASE = table("pg_database", column("datcollate"), column("datname"))


def data_version(dbapi_conn: Any) -> int:
    """SQLite's count of commits to the file (anyone's), as this connection last saw it.

    Asked of the driver's own connection: it is polled at every snapshot access, where
    SQLAlchemy's work per statement would cost ten times the question."""
    return dbapi_conn.execute("PRAGMA data_version").fetchone()[0]


def legacy_version(conn) -> int | None:
    """The number of the last hand-written migration applied (None: none was)."""
    if conn.dialect.name == "sqlite":
        return conn.exec_driver_sql("PRAGMA user_version").scalar_one() or None
    if not inspect(conn).has_table(_LEGACY.name):
        return None
    return conn.execute(select(_LEGACY.c.version)).scalar_one_or_none()


def forget_legacy_version(conn) -> None:
    """Drop the old marker: a release of before Alembic then refuses the catalog (its first
    migration finds the tables there) rather than run on a schema it does not know."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("PRAGMA user_version = 0")
    else:
        _LEGACY.drop(conn)


def collation(conn) -> str:
    """How PostgreSQL's catalog database sorts text."""
    return conn.execute(
        select(_PG_DATABASE.c.datcollate).where(_PG_DATABASE.c.datname == func.current_database())
    ).scalar_one()


def function_note(conn, name: str) -> str | None:
    """The comment on PostgreSQL's function ``name`` (None: none, or no such function)."""
    return conn.execute(select(func.obj_description(func.to_regproc(name), "pg_proc"))).scalar_one()


def lock_catalog(conn, key: int) -> None:
    """PostgreSQL's catalog write lock, held until the transaction ends."""
    conn.execute(select(func.pg_advisory_xact_lock(key)))


def notify(conn, channel: str, payload: str) -> None:
    """A PostgreSQL notice on ``channel``, delivered at commit (not at all after a rollback)."""
    conn.execute(select(func.pg_notify(channel, payload)))
