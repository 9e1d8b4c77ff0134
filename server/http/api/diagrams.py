"""Diagrams: create from a document, validate, describe, update, deploy, stop, status, delete."""
from __future__ import annotations

import json

from flask import Blueprint, g

from boxes import codes
from boxes.errors import Conflict, Denied, DiagramInvalid, InvalidInput
from catalog import Action, ObjectType
from server.http.api.schema_parts import ROLE, obj
from server.control.services import services
from server.control.diagrams import document_of, plan_for, run_named, spec_of
from server.http.guard import session, subject
from server.ingest.admission import runtime_of

bp = Blueprint("diagrams", __name__, url_prefix="/diagrams")

DOCUMENT = {"type": ["string", "object"], "maxLength": 1 << 20,
            "description": "the diagram document, as YAML/JSON text or as an object"}
CREATE = obj({"document": DOCUMENT, "role": ROLE}, ("document",))
VALIDATE = obj({"document": DOCUMENT}, ("document",))
D = ObjectType.DIAGRAM


def _describe(o) -> dict:
    out = {**o.to_dict(), "status": o.status}
    if o.spec:
        out["document"] = json.loads(o.spec)
    return out


@bp.get("")
@session()
def index():
    """The diagrams the session may view, with their status."""
    seen = services().catalog.objects.lookup(subject())
    return {"diagrams": [{**o.to_dict(), "status": o.status} for o in seen if o.type is D]}


@bp.post("")
@session(body=CREATE)
def create():
    """Add a diagram (ADD on the system, READ_TUPLE on every input); it starts stopped."""
    svc = services()
    doc = document_of(g.body["document"])
    plan = plan_for(svc.catalog, subject(), doc)
    created = svc.catalog.objects.add_diagram(subject(), spec_of(plan, doc), g.body.get("role"))
    return {**_describe(created[0]), "objects": [o.to_dict() for o in created]}, 201


@bp.post("/validate")
@session(body=VALIDATE)
def check():
    """Check a document against the streams the session may view, without storing it."""
    svc = services()
    try:
        plan = plan_for(svc.catalog, subject(), document_of(g.body["document"]))
    except DiagramInvalid as err:
        return {"valid": False, "problems": err.details["problems"]}
    return {"valid": True, "plan": plan.to_dict()}


@bp.get("/<name>")
@session()
def describe(name: str):
    """One diagram, with its document and status."""
    return _describe(services().catalog.objects.get(subject(), D, name))


@bp.put("/<name>")
@session(body=VALIDATE)
def update(name: str):
    """Replace a stopped diagram's document (its owner role; the new objects keep that owner).

    The new document is validated first; the diagram is then dropped and created again, so
    grants on its outputs start afresh: a changed query may expose other data, and its owner
    grants it again deliberately. If creating fails, the old diagram is put back.
    """
    svc = services()
    cat, who = svc.catalog, subject()
    old = cat.objects.get(who, D, name)
    if old.status == "running":
        raise Conflict(code=codes.DIAGRAM_RUNNING, name=name)
    doc = document_of(g.body["document"])
    if doc.get("name") != name:
        raise InvalidInput(code=codes.NAME_CHANGED, name=name)
    if old.owner_role not in who.roles:
        raise Denied(code=codes.NOT_OWNER, role=old.owner_role, name=name)
    new_spec = spec_of(plan_for(cat, who, doc), doc)
    old_doc = json.loads(old.spec)
    old_spec = spec_of(plan_for(cat, who, old_doc), old_doc)
    cat.objects.drop(who, D, name)
    try:
        created = cat.objects.add_diagram(who, new_spec, old.owner_role)
    except Exception:
        cat.objects.add_diagram(who, old_spec, old.owner_role)
        raise
    if svc.runtime is not None:
        svc.runtime.remove(name)
    return {**_describe(created[0]), "objects": [o.to_dict() for o in created]}


@bp.post("/<name>/deploy")
@session()
def deploy(name: str):
    """Start the diagram's query (SET_QUERY_STATUS); it resumes after a server restart."""
    svc = services()
    svc.catalog.objects.require(subject(), Action.SET_QUERY_STATUS, D, name)
    runtime_of(svc)
    obj_ = svc.catalog.objects.set_query_status(subject(), name, "running")
    try:
        run_named(svc, name)
    except Exception:
        svc.catalog.objects.set_query_status(subject(), name, "stopped")
        raise
    return {"name": name, "status": obj_.status}


@bp.post("/<name>/stop")
@session()
def stop(name: str):
    """Stop the diagram's query (SET_QUERY_STATUS)."""
    svc = services()
    obj_ = svc.catalog.objects.set_query_status(subject(), name, "stopped")
    if svc.runtime is not None:
        svc.runtime.stop(name)
    return {"name": name, "status": obj_.status}


@bp.get("/<name>/status")
@session()
def status(name: str):
    """Whether the diagram runs, and its query's progress.

    Per output: the last batch's id, input rows and duration, input and processed rows per
    second, delivered batches and rows, subscribers' backlog and losses, and latency_ms: for the
    last batch that delivered results, the milliseconds from the acknowledgement of the newest
    input tuple it read to the handoff of its results to delivery; null while the output has
    delivered nothing since it started, or when unknown (a batch replayed after a restart)."""
    svc = services()
    o = svc.catalog.objects.get(subject(), D, name)
    progress = svc.runtime.status(name) if svc.runtime is not None else None
    return {"name": name, "status": o.status, "progress": progress}


@bp.delete("/<name>")
@session()
def delete(name: str):
    """Drop the diagram with its boxes and outputs (its owner or an administrator)."""
    svc = services()
    svc.catalog.objects.drop(subject(), D, name)
    if svc.runtime is not None:
        svc.runtime.remove(name)
    return "", 204
