"""What the table groups share: the dialect's upsert, batch inserts, rows as tuples, and the
counters (``counters``) that hand out versions, source indexes and bits."""

from __future__ import annotations

from functools import cache
from typing import Any

from sqlalchemy import Connection, Table, bindparam, insert, update
from sqlalchemy.dialects import postgresql, sqlite

from catalog.schema import counters


def _insert(conn: Connection, target: Table) -> Any:
    """An INSERT that can say ON CONFLICT, in the connection's dialect."""
    return (sqlite if conn.dialect.name == "sqlite" else postgresql).insert(target)


@cache
def _insert_new(dialect: str, target: Table) -> Any:
    """An INSERT that skips a row already there (ON CONFLICT DO NOTHING), built once for each
    database, as ``BUMP`` is: a statement built at each call costs more than its rows."""
    return (sqlite if dialect == "sqlite" else postgresql).insert(target).on_conflict_do_nothing()


def _upsert(conn: Connection, target: Table, keys: tuple[str, ...], row: dict[str, Any]) -> None:
    """Insert ``row``, or update the row of the same ``keys`` with its other values."""
    stmt = _insert(conn, target).values(row)
    conn.execute(
        stmt.on_conflict_do_update(
            index_elements=list(keys),
            set_={name: stmt.excluded[name] for name in row if name not in keys},
        )
    )


def _insert_many(conn: Connection, target: Table, rows: list[dict[str, Any]]) -> None:
    if rows:
        conn.execute(insert(target), rows)


def _counter(name: str):
    return counters.c.name == name


def _tuples(conn, query: Any) -> tuple:
    return tuple(tuple(row) for row in conn.execute(query))


# Built once, as is every statement each change runs: one built at each call costs more than
# SQLite takes to run it.
BUMP = (
    update(counters)
    .where(counters.c.name == bindparam("counter"))
    .values(value=counters.c.value + 1)
    .returning(counters.c.value - 1)
)


def _bump(conn, name: str) -> int:
    """The counter ``name`` moved on by one; its value before."""
    return conn.execute(BUMP, {"counter": name}).scalar_one()
