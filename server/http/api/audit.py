"""The audit log (administrators), newest first, filtered by query parameters."""

from __future__ import annotations

from flask import Blueprint, request

from server.control.services import services
from server.http.api.schema_parts import (
    ANY_OBJECT,
    STRING,
    STRINGS,
    answer,
    listing,
    query_values,
)
from server.http.guard import guarded, subject

bp = Blueprint("audit", __name__, url_prefix="/audit")

QUERY = {
    "type": "object",
    "properties": {
        "user": {"type": "string"},
        "event": {"type": "string"},
        "object": {"type": "string"},
        "since": {"type": "number"},
        "before_id": {"type": "integer", "minimum": 1, "maximum": 2**63 - 1},
        "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
        "allowed": {"type": "boolean"},
    },
}


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
    entries = services().catalog.audit(subject(), **query_values(request.args, QUERY))
    return {"entries": [e.to_dict() for e in entries]}
