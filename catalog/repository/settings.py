"""What administrators tune: the system settings and the per-role limits on box parameters."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import delete, select

from catalog.repository._common import _upsert
from catalog.schema import role_limits, system_settings


def load_system_settings(conn) -> dict[str, Any]:
    """The system settings an administrator changed (values are stored as JSON)."""
    return {
        name: json.loads(value)
        for name, value in conn.execute(select(system_settings.c.name, system_settings.c.value))
    }


def set_system_setting(conn, name: str, value: Any, by: str, at: float) -> None:
    _upsert(
        conn,
        system_settings,
        ("name",),
        {"name": name, "value": json.dumps(value), "changed_by": by, "changed_at": at},
    )


def delete_system_setting(conn, name: str) -> None:
    conn.execute(delete(system_settings).where(system_settings.c.name == name))


# Built once: every create and deploy reads the limits.
ROLE_LIMITS = select(role_limits.c.role, role_limits.c.parameter, role_limits.c.value).order_by(
    role_limits.c.role, role_limits.c.parameter
)


def load_role_limits(conn) -> dict[str, dict[str, float]]:
    """Per role, the limits it carries on box parameters (``boxes.cost.PARAMETERS``)."""
    out: dict[str, dict[str, float]] = {}
    for role, parameter, value in conn.execute(ROLE_LIMITS):
        out.setdefault(role, {})[parameter] = value
    return out


def set_role_limit(conn, role: str, parameter: str, value: float, by: str, at: float) -> None:
    _upsert(
        conn,
        role_limits,
        ("role", "parameter"),
        {"role": role, "parameter": parameter, "value": value, "changed_by": by, "changed_at": at},
    )


def delete_role_limit(conn, role: str, parameter: str) -> None:
    conn.execute(
        delete(role_limits).where(role_limits.c.role == role, role_limits.c.parameter == parameter)
    )
