"""Dashboards: the caller's own named pages of panels (an output as a table, chart or map).

Only ever the caller's: a name is looked up among its own dashboards, so another user's
(an administrator's included) answers exactly like none. A panel names an output and stores
no right: the page subscribes to it as any subscriber does, and says so when it may not.
"""

from __future__ import annotations

from flask import Blueprint, g

from catalog.repository import DashboardRow
from server.http.api.schema_parts import NAME, STRING, answer, listing, obj
from server.http.guard import guarded, subject
from server.services import services

bp = Blueprint("dashboards", __name__, url_prefix="/dashboards")

VIEWS = ("table", "chart", "map")
MAX_PANELS = 12
OPTIONS = {
    "type": "object",
    "description": "the view's choices, as the page names them (a chart's field and split, "
    "a map's colour)",
    "maxProperties": 8,
    "propertyNames": {"pattern": "^[a-z][a-z_]{0,31}$"},
    "additionalProperties": {
        "type": "string",
        "pattern": "^[A-Za-z0-9_]{0,64}$",
        "description": "a field's name, or empty for the view's default",
    },
}
PANEL = obj(
    {
        "output": {**NAME, "x-what": "output"},
        "view": {"type": "string", "enum": list(VIEWS)},
        "options": OPTIONS,
    },
    ("output", "view"),
)
# At most about 11 KB as stored, under the catalog's own limit (catalog.dashboards.MAX_BYTES).
PANELS = {"type": "array", "maxItems": MAX_PANELS, "items": PANEL}
DASHBOARD = answer({"name": STRING, "panels": PANELS, "changed_at": {"type": "number"}})
PATH = {"name": {**NAME, "x-what": "dashboard"}}


def _shown(row: DashboardRow) -> dict:
    return {"name": row.name, "panels": row.panels, "changed_at": row.changed_at}


@bp.get("")
@guarded(answer=listing("dashboards", DASHBOARD))
def index():
    """The caller's dashboards, by name, each with its panels."""
    return {"dashboards": [_shown(d) for d in services().catalog.dashboards.mine(subject())]}


@bp.get("/<name>")
@guarded(answer=DASHBOARD, path=PATH)
def describe(name: str):
    """One of the caller's dashboards."""
    return _shown(services().catalog.dashboards.get(subject(), name))


@bp.put("/<name>")
@guarded(body=obj({"panels": PANELS}, ("panels",)), answer=DASHBOARD, path=PATH)
def put(name: str):
    """Store one of the caller's dashboards, new or replaced whole (the page saves each change).

    A user keeps a limited number of them: one more is TOO_MANY_DASHBOARDS."""
    return _shown(services().catalog.dashboards.put(subject(), name, g.body["panels"]))


@bp.delete("/<name>")
@guarded(status=204, path=PATH)
def delete(name: str):
    """Delete one of the caller's dashboards."""
    services().catalog.dashboards.delete(subject(), name)
    return "", 204
