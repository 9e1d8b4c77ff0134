"""Schemas: create, list, describe, delete."""

from __future__ import annotations

from flask import Blueprint, g

from boxes import codes
from boxes.types import FIELD_NAME, TYPE_ALIASES
from catalog import ObjectType
from server.http.api.schema_parts import ANY_OBJECT, NAME, ROLE, catalog_object, listing, obj
from server.http.guard import guarded, subject
from server.services import services

bp = Blueprint("schemas", __name__, url_prefix="/schemas")

# A field's type, in any case (``long``, ``LONG``, ``bigint``...).
TYPE_NAME = {
    "type": "string",
    "pattern": "^("
    + "|".join("".join(f"[{c}{c.upper()}]" for c in name) for name in sorted(TYPE_ALIASES))
    + ")$",
    "x-code": codes.SCHEMA_INVALID,
    "description": "one of " + ", ".join(sorted(TYPE_ALIASES)) + " (any case)",
}
FIELD = {"type": "string", "pattern": FIELD_NAME.pattern, "x-code": codes.SCHEMA_INVALID}
CREATE = obj(
    {
        "name": NAME,
        "fields": {
            "type": "object",
            "minProperties": 1,
            "maxProperties": 256,
            "propertyNames": FIELD,
            "additionalProperties": TYPE_NAME,
        },
        "event_time": {
            **FIELD,
            "type": ["string", "null"],
            "description": "the field that holds each tuple's event time: one of 'fields' "
            "whose type is timestamp (null or left out: the arrival time)",
        },
        "role": ROLE,
    },
    ("name", "fields"),
)
SCHEMA = catalog_object(schema=ANY_OBJECT)


def _describe(o) -> dict:
    return {**o.to_dict(), "schema": o.document}


@bp.get("")
@guarded(answer=listing("schemas", SCHEMA))
def index():
    """The schemas the session may view."""
    seen = services().catalog.objects.lookup(subject())
    return {"schemas": [_describe(o) for o in seen if o.type is ObjectType.SCHEMA]}


@bp.post("")
@guarded(body=CREATE, answer=SCHEMA, status=201)
def create():
    """Add a schema (ADD on the system); its owner is the creating role."""
    spec = {"fields": g.body["fields"]}
    if g.body.get("event_time") is not None:
        spec["event_time"] = g.body["event_time"]
    created = services().catalog.objects.add_schema(
        subject(), g.body["name"], spec, g.body.get("role")
    )
    return _describe(created), 201


@bp.get("/<name>")
@guarded(answer=SCHEMA)
def describe(name: str):
    """One schema's fields."""
    return _describe(services().catalog.objects.get(subject(), ObjectType.SCHEMA, name))


@bp.delete("/<name>")
@guarded(status=204)
def delete(name: str):
    """Drop a schema no stream uses (its owner or an administrator)."""
    services().catalog.objects.drop(subject(), ObjectType.SCHEMA, name)
    return "", 204
