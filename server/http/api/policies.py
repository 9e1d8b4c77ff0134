"""ASSIST access-control policies and users' attributes (administrators; ``catalog.policies``,
docs/rewrite.md). After every change the running diagrams are checked again: those whose
rewrite is stale are stopped and named in the answer (``stopped``)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, g

from boxes import codes
from boxes.rewrite.policy import invalid, policy_items
from boxes.rewrite.xmlform import MAX_BYTES, xml_items
from catalog.policies import POLICY_NAME as NAME_PATTERN
from server.control.rewrites import revalidate
from server.http.api.schema_parts import NAME, STRINGS, USER_NAME, answer, listing, obj
from server.http.guard import guarded, subject
from server.services import services

bp = Blueprint("policies", __name__, url_prefix="/policies")

POLICY_NAME = {
    "type": "string",
    "pattern": f"^{NAME_PATTERN.pattern}$",
    "x-code": codes.POLICY_INVALID,
    "description": "a policy's name: 1 to 128 characters, no '/' or control characters",
}
ITEM = {
    "type": "object",
    "description": "a policy in its YAML form (docs/rewrite.md): name, role, streams, where, "
    "privilege, during, window",
}
SOURCE = {
    **obj(
        {
            "yaml": {
                "type": "string",
                "maxLength": MAX_BYTES,
                "description": "YAML (or JSON) text: {policies: [...]}",
            },
            "policies": {"type": "array", "items": ITEM, "maxItems": 10_000},
            "xml": {
                "type": "string",
                "maxLength": MAX_BYTES,
                "description": "the paper's XML catalog (Appendix B); no DTD, no entities",
            },
            "methods": {
                "type": "object",
                "additionalProperties": {"type": "string", "maxLength": 4096},
                "maxProperties": 256,
                "description": "for XML: each method's expression template, e.g. "
                "{'BelongsToCompany': '{0} IN (self.ships)'}",
            },
            "roles": {
                "type": "object",
                "additionalProperties": NAME,
                "maxProperties": 256,
                "description": "for XML: the Sluice role of each of its role names",
            },
        }
    ),
    "oneOf": [{"required": ["yaml"]}, {"required": ["policies"]}, {"required": ["xml"]}],
}
CHANGED = answer({"names": STRINGS, "stopped": STRINGS})
STOPPED = answer({"stopped": STRINGS})
ATTRIBUTE = {
    "description": "text, a number, true/false, or a list of those",
    "type": ["string", "number", "boolean", "array"],
    "items": {"type": ["string", "number", "boolean"]},
}
ATTRIBUTES = {
    "type": "object",
    "propertyNames": NAME,
    "additionalProperties": ATTRIBUTE,
    "maxProperties": 64,
}


def _items(body: dict) -> list[Any]:
    if "xml" in body:
        items = xml_items(body["xml"], body.get("methods", {}))
        roles = body.get("roles", {})
        return [{**item, "role": roles.get(item["role"], item["role"])} for item in items]
    return body["policies"] if "policies" in body else policy_items(body["yaml"])


@bp.get("")
@guarded(answer=listing("policies", ITEM))
def index():
    """Every policy, by name, in its YAML form."""
    return {"policies": services().catalog.policies.all(subject())}


@bp.post("")
@guarded(body=SOURCE, answer=CHANGED, status=201)
def create():
    """Add policies from YAML, a list of items, or the paper's XML: all or none, names new."""
    svc = services()
    names = svc.catalog.policies.put(subject(), _items(g.body))
    return {"names": names, "stopped": revalidate(svc, subject())}, 201


@bp.put("/<name>")
@guarded(body=SOURCE, answer=CHANGED, path={"name": POLICY_NAME})
def replace(name: str):
    """Add or replace the one policy ``name`` (the body holds exactly that policy)."""
    svc = services()
    items = _items(g.body)
    if len(items) != 1 or not isinstance(items[0], dict) or items[0].get("name") != name:
        raise invalid(name, "the body holds exactly one policy, of this name")
    names = svc.catalog.policies.put(subject(), items, replace=True)
    return {"names": names, "stopped": revalidate(svc, subject())}


@bp.delete("/<name>")
@guarded(answer=STOPPED, path={"name": POLICY_NAME})
def delete(name: str):
    """Drop a policy (what it granted is denied from now on)."""
    svc = services()
    svc.catalog.policies.delete(subject(), name)
    return {"stopped": revalidate(svc, subject())}


@bp.get("/users/<name>")
@guarded(answer=answer({"attributes": ATTRIBUTES}), path={"name": USER_NAME})
def attributes(name: str):
    """A user's attributes: the ``self`` of policy predicates."""
    return {"attributes": services().catalog.policies.attributes(subject(), name)}


@bp.put("/users/<name>")
@guarded(
    body=obj({"attributes": ATTRIBUTES}, ("attributes",)),
    answer=answer({"attributes": ATTRIBUTES, "stopped": STRINGS}),
    path={"name": USER_NAME},
)
def set_attributes(name: str):
    """Replace a user's attributes (``{}``: none)."""
    svc = services()
    values = svc.catalog.policies.set_attributes(subject(), name, g.body["attributes"])
    return {"attributes": values, "stopped": revalidate(svc, subject())}
