"""The audit log (administrators), newest first, filtered by query parameters."""

from __future__ import annotations

import jsonschema
from flask import Blueprint, request

from boxes import codes
from boxes.errors import InvalidInput
from server.control.services import services
from server.http.api.schema_parts import ANY_OBJECT, STRING, STRINGS, answer, listing
from server.http.guard import guarded, subject

bp = Blueprint("audit", __name__, url_prefix="/audit")

# query parameter -> how to read it
FILTERS = {
    "user": str,
    "event": str,
    "object": str,
    "since": float,
    "before_id": int,
    "limit": int,
    "allowed": lambda v: {"true": True, "false": False}[v],
}
QUERY = {
    "type": "object",
    "properties": {
        "user": {"type": "string"},
        "event": {"type": "string"},
        "object": {"type": "string"},
        "since": {"type": "number"},
        "before_id": {"type": "integer"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
        "allowed": {"type": "boolean"},
    },
}


def _filters() -> dict:
    out = {}
    for key, value in request.args.items():
        if key not in FILTERS:
            raise InvalidInput(
                f"unknown filter {key[:40]!r}; expected one of {', '.join(FILTERS)}",
                code=codes.UNKNOWN_PARAMETER,
            )
        try:
            out[key] = FILTERS[key](value)
            jsonschema.validate(out[key], QUERY["properties"][key])
        except (KeyError, ValueError, jsonschema.ValidationError):
            raise InvalidInput(
                code=codes.INVALID_PARAMETER, name=key, details={"parameter": key}
            ) from None
    return out


ENTRY = answer(
    {
        "id": {"type": "integer"},
        "at": {"type": "number"},
        "user": {"type": ["string", "null"]},
        "roles": STRINGS,
        "event": STRING,
        "object": {"type": ["string", "null"]},
        "allowed": {"type": "boolean"},
        "reason": STRING,
        "details": ANY_OBJECT,
    }
)


@bp.get("")
@guarded(query=QUERY, answer=listing("entries", ENTRY))
def index():
    """Audit entries: every permission change, login and denial."""
    entries = services().catalog.audit(subject(), **_filters())
    return {"entries": [e.to_dict() for e in entries]}
