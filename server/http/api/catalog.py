"""Catalog lookup: the objects the session may view, and nothing else."""

from __future__ import annotations

from flask import Blueprint

from catalog.model import parse_type
from server.http.api.schema_parts import CATALOG_OBJECT, listing
from server.http.guard import guarded, subject
from server.services import services

bp = Blueprint("catalog", __name__, url_prefix="/catalog")


@bp.get("")
@guarded(answer=listing("objects", CATALOG_OBJECT))
def lookup():
    """Every object the session may view (the paper's ``lookup()``)."""
    return {"objects": [o.to_dict() for o in services().catalog.objects.lookup(subject())]}


@bp.get("/<type_>/<name>")
@guarded(answer=CATALOG_OBJECT)
def describe(type_: str, name: str):
    """One object; one the session may not view answers exactly like a missing one."""
    obj = services().catalog.objects.get(subject(), parse_type(type_), name)
    return obj.to_dict()
