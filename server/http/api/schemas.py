"""Schemas: create, list, describe, delete."""

from __future__ import annotations

import json

from flask import Blueprint, g

from catalog import ObjectType
from server.control.services import services
from server.http.api.schema_parts import NAME, ROLE, obj
from server.http.guard import guarded, subject

bp = Blueprint("schemas", __name__, url_prefix="/schemas")

CREATE = obj(
    {
        "name": NAME,
        "fields": {
            "type": "object",
            "maxProperties": 256,
            "additionalProperties": {"type": "string", "maxLength": 32},
        },
        "event_time": {"type": ["string", "null"], "maxLength": 64},
        "role": ROLE,
    },
    ("name", "fields"),
)


def _describe(o) -> dict:
    return {**o.to_dict(), "schema": json.loads(o.spec)}


@bp.get("")
@guarded()
def index():
    """The schemas the session may view."""
    seen = services().catalog.objects.lookup(subject())
    return {"schemas": [_describe(o) for o in seen if o.type is ObjectType.SCHEMA]}


@bp.post("")
@guarded(body=CREATE)
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
@guarded()
def describe(name: str):
    """One schema's fields."""
    return _describe(services().catalog.objects.get(subject(), ObjectType.SCHEMA, name))


@bp.delete("/<name>")
@guarded()
def delete(name: str):
    """Drop a schema no stream uses (its owner or an administrator)."""
    services().catalog.objects.drop(subject(), ObjectType.SCHEMA, name)
    return "", 204
