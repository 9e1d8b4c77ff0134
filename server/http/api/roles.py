"""Roles (administrators): list, add, delete."""

from __future__ import annotations

from flask import Blueprint, g

from server.control.services import services
from server.http.api.schema_parts import NAME, STRING, answer, listing, obj
from server.http.guard import guarded, subject

bp = Blueprint("roles", __name__, url_prefix="/roles")


@bp.get("")
@guarded(answer=listing("roles", STRING))
def index():
    """Every role."""
    return {"roles": services().catalog.accounts.roles(subject())}


@bp.post("")
@guarded(body=obj({"name": NAME}, ("name",)), answer=answer({"name": STRING}), status=201)
def create():
    """Add a role."""
    services().catalog.accounts.add_role(subject(), g.body["name"])
    return {"name": g.body["name"]}, 201


@bp.delete("/<name>")
@guarded(status=204)
def delete(name: str):
    """Delete a role that owns nothing."""
    services().catalog.accounts.delete_role(subject(), name)
    return "", 204
