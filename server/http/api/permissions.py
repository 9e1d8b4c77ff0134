"""Permissions: the whole table (administrators), one object's grants, grant and revoke."""

from __future__ import annotations

from flask import Blueprint

from catalog.model import parse_type
from server.http.api.schema_parts import ACTION, OBJECT_TYPE, STRING, answer, listing
from server.http.guard import guarded, subject
from server.services import services

bp = Blueprint("permissions", __name__, url_prefix="/permissions")
GRANT = "/<type_>/<name>/<role>/<action>"


ROW = answer(
    {
        "type": OBJECT_TYPE,
        "name": STRING,
        "role": STRING,
        "actions": {"type": "array", "items": ACTION},
        "via": STRING,
    }
)
ROWS = listing("permissions", ROW)


@bp.get("")
@guarded(answer=ROWS)
def table():
    """The whole permission table, as the paper's figures show it (administrators)."""
    return {"permissions": [r.to_dict() for r in services().catalog.grants.table(subject())]}


@bp.get("/<type_>/<name>")
@guarded(answer=ROWS)
def of(type_: str, name: str):
    """Who holds what on one object (its owner role, CHANGE_PERM holders, administrators)."""
    rows = services().catalog.grants.of(subject(), parse_type(type_), name)
    return {"permissions": [r.to_dict() for r in rows]}


@bp.put(GRANT)
@guarded(answer=answer({"granted": {"type": "boolean"}}))
def grant(type_: str, name: str, role: str, action: str):
    """Grant ``action`` on an object to ``role``; only what the granter holds may be granted.

    An action that does not apply to the object's type (WRITE on a schema, SUBSCRIBE on a
    stream: see x-applicable-actions) is refused with ACTION_NOT_APPLICABLE."""
    added = services().catalog.grants.grant(subject(), role, action, parse_type(type_), name)
    return {"granted": added}


@bp.delete(GRANT)
@guarded(answer=answer({"revoked": {"type": "boolean"}}))
def revoke(type_: str, name: str, role: str, action: str):
    """Revoke a grant; the next result batch is filtered by the new permissions.

    An action that does not apply to the object's type is refused with ACTION_NOT_APPLICABLE."""
    removed = services().catalog.grants.revoke(subject(), role, action, parse_type(type_), name)
    return {"revoked": removed}
