"""The catalog's version, the audit log, leases timed by the database's own clock, and the
change log's notes."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import FunctionElement

from catalog.repository._common import _bump, _counter, _upsert
from catalog.schema import FLOAT, audit, counters, leases, touched


class db_now(FunctionElement):
    """The database's clock in seconds since the epoch: servers whose own clocks differ still
    agree on when a lease ends."""

    type = FLOAT
    inherit_cache = True


@compiles(db_now, "sqlite")
def _sqlite_now(element: db_now, compiler: Any, **kw: Any) -> str:
    return "((julianday('now') - 2440587.5) * 86400.0)"


@compiles(db_now, "postgresql")
def _postgresql_now(element: db_now, compiler: Any, **kw: Any) -> str:
    return "extract(epoch from clock_timestamp())::double precision"


# Built once, as ``_common.BUMP`` is: every change runs them.
CATALOG_VERSION = select(counters.c.value).where(_counter("catalog_version"))
INSERT_AUDIT = insert(audit)
TAKE_TOUCHED = delete(touched).returning(touched.c.what, touched.c.id)


def catalog_version(conn) -> int:
    return conn.execute(CATALOG_VERSION).scalar_one()


def bump_catalog_version(conn) -> int:
    return _bump(conn, "catalog_version") + 1


def insert_audit(conn, row: dict[str, Any]) -> None:
    """One audit entry (``catalog.audit``)."""
    conn.execute(INSERT_AUDIT, row)


AUDIT_COLUMNS = (
    audit.c.id,
    audit.c.at,
    audit.c.user_name,
    audit.c.roles,
    audit.c.event,
    audit.c.object,
    audit.c.allowed,
    audit.c.reason,
    audit.c.details,
)


def audit_rows(
    conn,
    equal: dict[str, Any],
    since: float | None,
    until: float | None,
    before_id: int | None,
    limit: int,
):
    """Audit rows newest first: columns ``equal`` to their values, at or after ``since`` and
    before ``until``, ids before ``before_id`` (the Nones left out)."""
    clauses = [audit.c[name] == value for name, value in equal.items() if value is not None]
    if since is not None:
        clauses.append(audit.c.at >= since)
    if until is not None:
        clauses.append(audit.c.at < until)
    if before_id is not None:
        clauses.append(audit.c.id < before_id)
    return conn.execute(
        select(*AUDIT_COLUMNS).where(*clauses).order_by(audit.c.id.desc()).limit(limit)
    )


def lease(conn, name: str) -> tuple[float, tuple | None]:
    """The database's clock, and the lease's (holder, address, expires_at) if it has one."""
    now = conn.execute(select(db_now())).scalar_one()
    row = conn.execute(
        select(leases.c.holder, leases.c.address, leases.c.expires_at).where(leases.c.name == name)
    ).first()
    return now, None if row is None else tuple(row)


def put_lease(conn, name: str, holder: str, address: str, expires_at: float) -> None:
    _upsert(
        conn,
        leases,
        ("name",),
        {"name": name, "holder": holder, "address": address, "expires_at": expires_at},
    )


def delete_lease(conn, name: str, holder: str) -> None:
    conn.execute(delete(leases).where(leases.c.name == name, leases.c.holder == holder))


def take_touched(conn) -> set[tuple[str, int | None]]:
    """The change log's notes (``catalog.changelog``), forgotten as they are read."""
    return {tuple(row) for row in conn.execute(TAKE_TOUCHED)}
