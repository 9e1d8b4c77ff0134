"""Roles (administrators): list, add, delete, and the limits a role carries on box parameters."""

from __future__ import annotations

from flask import Blueprint, g

from boxes.cost import PARAMETERS
from catalog.operators import MAX_LIMIT
from server.control.rewrites import revalidate
from server.http.api.schema_parts import ROLE_NAME, STRING, answer, listing, obj
from server.http.guard import guarded, subject
from server.services import services

bp = Blueprint("roles", __name__, url_prefix="/roles")


@bp.get("")
@guarded(answer=listing("roles", STRING))
def index():
    """Every role."""
    return {"roles": services().catalog.accounts.roles(subject())}


@bp.post("")
@guarded(body=obj({"name": ROLE_NAME}, ("name",)), answer=answer({"name": STRING}), status=201)
def create():
    """Add a role."""
    services().catalog.accounts.add_role(subject(), g.body["name"])
    return {"name": g.body["name"]}, 201


LIMIT = {
    "type": ["number", "null"],
    "exclusiveMinimum": 0,
    "exclusiveMaximum": MAX_LIMIT,
    "description": "the role's limit; null removes it",
}
LIMITS = {
    **obj({name: LIMIT for name in PARAMETERS}),
    "minProperties": 1,
}


NUMBER = {"type": "number"}
LIMITS_ANSWER = answer(
    {
        "role": STRING,
        "limits": obj(dict.fromkeys(PARAMETERS, NUMBER)),
        "ceilings": answer(dict.fromkeys(PARAMETERS, NUMBER)),
    }
)


def _limits(role: str) -> dict:
    svc = services()
    return {
        "role": role,
        "limits": svc.catalog.operators.limits_of(subject(), role),
        "ceilings": svc.limits.cost_ceilings(),
    }


@bp.get("/<name>/limits")
@guarded(answer=LIMITS_ANSWER)
def limits(name: str):
    """A role's limits on box parameters, and the system-wide ceilings over every role."""
    return _limits(name)


@bp.patch("/<name>/limits")
@guarded(body=LIMITS, answer=LIMITS_ANSWER)
def set_limits(name: str):
    """Set (a number) or remove (null) a role's limits on box parameters: all or none, each
    audited. A diagram over its deployer's limits is refused when added, replaced or deployed.
    """
    services().catalog.operators.set_limits(subject(), name, g.body)
    return _limits(name)


@bp.delete("/<name>")
@guarded(status=204)
def delete(name: str):
    """Delete a role that owns nothing."""
    services().catalog.accounts.delete_role(subject(), name)
    revalidate(services(), subject())  # diagrams deployed playing it are stale
    return "", 204
