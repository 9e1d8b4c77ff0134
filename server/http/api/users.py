"""Users (administrators): list, add, enable or disable, set a password, delete, assign roles."""

from __future__ import annotations

from flask import Blueprint, g

from server.control.rewrites import revalidate
from server.http.api.schema_parts import (
    PASSWORD,
    ROLE_NAME,
    STRING,
    STRINGS,
    USER_NAME,
    answer,
    listing,
    obj,
)
from server.http.guard import guarded, subject
from server.services import services

bp = Blueprint("users", __name__, url_prefix="/users")

CREATE = obj(
    {
        "name": USER_NAME,
        "password": PASSWORD,
        "roles": {"type": "array", "items": ROLE_NAME, "maxItems": 64},
    },
    ("name", "password"),
)
USER = answer({"name": STRING, "enabled": {"type": "boolean"}, "roles": STRINGS})
BY_NAME = {"name": USER_NAME}
ASSIGNED = answer({"user": STRING, "role": STRING, "assigned": {"type": "boolean"}})
CHANGE = {**obj({"enabled": {"type": "boolean"}, "password": PASSWORD}), "minProperties": 1}


def _user(u) -> dict:
    return {"name": u.name, "enabled": u.enabled, "roles": sorted(u.roles)}


@bp.get("")
@guarded(answer=listing("users", USER))
def index():
    """Every user, with its roles."""
    return {"users": [_user(u) for u in services().catalog.accounts.users(subject())]}


@bp.post("")
@guarded(body=CREATE, answer=USER, status=201)
def create():
    """Add a user with the given roles."""
    user = services().catalog.accounts.add_user(
        subject(), g.body["name"], g.body["password"], g.body.get("roles", ())
    )
    return _user(user), 201


@bp.patch("/<name>")
@guarded(body=CHANGE, answer=answer({"name": STRING, "changed": STRINGS}), path=BY_NAME)
def change(name: str):
    """Enable or disable a user, or set its password.

    Disabling and a new password both end the user's sessions and disconnect its sockets."""
    accounts = services().catalog.accounts
    if "password" in g.body:
        accounts.set_password(subject(), name, g.body["password"])
    if "enabled" in g.body:
        accounts.set_enabled(subject(), name, g.body["enabled"])
        revalidate(services(), subject())  # a disabled deployer's rewrites are stale
    return {"name": name, "changed": sorted(g.body)}


@bp.delete("/<name>")
@guarded(status=204, path=BY_NAME)
def delete(name: str):
    """Delete a user; the objects it created stay with their owner role, and the diagrams
    it deployed rewritten under its policies are stopped (REWRITE_STALE)."""
    services().catalog.accounts.delete_user(subject(), name)
    revalidate(services(), subject())
    return "", 204


@bp.put("/<name>/roles/<role>")
@guarded(answer=ASSIGNED, path=BY_NAME)
def assign(name: str, role: str):
    """Let a user play a role."""
    services().catalog.accounts.assign_role(subject(), name, role)
    return {"user": name, "role": role, "assigned": True}


@bp.delete("/<name>/roles/<role>")
@guarded(answer=ASSIGNED, path=BY_NAME)
def unassign(name: str, role: str):
    """Take a role from a user, and from its open sessions; diagrams it deployed rewritten
    under that role's policies are stopped (REWRITE_STALE)."""
    services().catalog.accounts.unassign_role(subject(), name, role)
    revalidate(services(), subject())
    return {"user": name, "role": role, "assigned": False}
