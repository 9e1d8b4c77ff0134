"""The audit log (administrators), newest first, filtered by query parameters, a page at a time.

A page is at most ``limit`` entries; ``next_before_id`` is the cursor of the next (older) page,
null on the last, so a client pages back with ``before_id`` while new entries keep arriving
at the top without shifting what it has seen."""

from __future__ import annotations

from flask import Blueprint, request

from catalog.audit import MAX_LIMIT
from server.http.api.schema_parts import (
    ANY_OBJECT,
    STRING,
    STRINGS,
    answer,
    query_values,
)
from server.http.guard import guarded, subject
from server.services import services

bp = Blueprint("audit", __name__, url_prefix="/audit")

PAGE_MAX = MAX_LIMIT // 2  # one more is read to tell whether an older page follows
QUERY = {
    "type": "object",
    "properties": {
        "user": {"type": "string"},
        "event": {"type": "string"},
        "object": {"type": "string"},
        "since": {"type": "number", "description": "entries at or after this time (epoch s)"},
        "until": {"type": "number", "description": "entries before this time (epoch s)"},
        "before_id": {"type": "integer", "minimum": 1, "maximum": 2**63 - 1},
        "limit": {"type": "integer", "minimum": 1, "maximum": PAGE_MAX},
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
PAGE = answer(
    {
        "entries": {"type": "array", "items": ENTRY},
        "next_before_id": {"type": ["integer", "null"]},
    }
)


@bp.get("")
@guarded(query=QUERY, answer=PAGE)
def index():
    """Audit entries: every permission change, login and denial, newest first, a page at a time
    (``next_before_id`` as ``before_id`` asks for the next, older page)."""
    filters = {"limit": 100, **query_values(request.args, QUERY)}
    limit = filters["limit"]
    entries = services().catalog.audit(subject(), **{**filters, "limit": limit + 1})
    more = len(entries) > limit
    return {
        "entries": [e.to_dict() for e in entries[:limit]],
        "next_before_id": entries[limit - 1].id if more else None,
    }
