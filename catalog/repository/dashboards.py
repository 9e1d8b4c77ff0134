"""Each user's dashboards: a name and its panels (stored as JSON), keyed by the user's id."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from sqlalchemy import delete, func, select

from catalog.repository._common import _upsert
from catalog.schema import dashboards


class DashboardRow(NamedTuple):
    name: str
    panels: list[dict[str, Any]]
    changed_at: float


def dashboards_of(conn, user_id: int) -> list[DashboardRow]:
    """The user's dashboards, by name."""
    query = (
        select(dashboards.c.name, dashboards.c.panels, dashboards.c.changed_at)
        .where(dashboards.c.user_id == user_id)
        .order_by(dashboards.c.name)
    )
    return [DashboardRow(name, json.loads(panels), at) for name, panels, at in conn.execute(query)]


def count_dashboards(conn, user_id: int) -> int:
    query = select(func.count()).select_from(dashboards).where(dashboards.c.user_id == user_id)
    return conn.execute(query).scalar_one()


def has_dashboard(conn, user_id: int, name: str) -> bool:
    query = select(dashboards.c.name).where(
        dashboards.c.user_id == user_id, dashboards.c.name == name
    )
    return conn.execute(query).first() is not None


def put_dashboard(conn, user_id: int, name: str, panels: str, at: float) -> None:
    """Store ``panels`` (JSON text) as the user's dashboard ``name``, new or replaced."""
    row = {"user_id": user_id, "name": name, "panels": panels, "changed_at": at}
    _upsert(conn, dashboards, ("user_id", "name"), row)


def delete_dashboard(conn, user_id: int, name: str) -> bool:
    """Whether there was such a dashboard to delete."""
    stmt = delete(dashboards).where(dashboards.c.user_id == user_id, dashboards.c.name == name)
    return conn.execute(stmt).rowcount > 0
