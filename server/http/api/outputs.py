"""Outputs: the ones the session may view, one output's schema, and its recent results."""

from __future__ import annotations

from flask import Blueprint

from catalog import ObjectType
from server.control.services import services
from server.http.api.schema_parts import ANY_OBJECT, STRING, answer, catalog_object, listing
from server.http.guard import guarded, subject

bp = Blueprint("outputs", __name__, url_prefix="/outputs")
OUTPUT = ObjectType.OUTPUT
DESCRIBED = catalog_object(schema=ANY_OBJECT)
RECENT = answer({"output": STRING, "tuples": {"type": "array", "items": ANY_OBJECT}})


def _describe(o) -> dict:
    out = o.to_dict()
    schema = services().delivery.schemas.get(o.name)
    if schema is not None:
        out["schema"] = schema.to_dict()
    return out


@bp.get("")
@guarded(answer=listing("outputs", DESCRIBED))
def index():
    """The outputs the session may view."""
    seen = services().catalog.objects.lookup(subject())
    return {"outputs": [_describe(o) for o in seen if o.type is OUTPUT]}


@bp.get("/<name>")
@guarded(answer=DESCRIBED)
def describe(name: str):
    """One output, with its schema once its diagram has been deployed."""
    return _describe(services().catalog.objects.get(subject(), OUTPUT, name))


@bp.get("/<name>/recent")
@guarded(answer=RECENT)
def recent(name: str):
    """The latest results (SUBSCRIBE), filtered by the session's permissions as they are now."""
    svc = services()
    table = svc.runtime.recent(name) if svc.runtime is not None else None
    rows = [] if table is None else svc.delivery.visible_rows(subject(), name, table)
    return {"output": name, "tuples": rows}
