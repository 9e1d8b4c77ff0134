"""Diagrams: create from a document, validate, describe, update, deploy, stop, status, history,
delete."""

from __future__ import annotations

import json

from flask import Blueprint, g, request

from boxes.cql.printer import to_cql
from boxes.document import SECTIONS
from boxes.errors import DiagramInvalid
from catalog import ObjectType
from server.control import lifecycle
from server.control import versions as versions_
from server.control.diagrams import planned, status_of
from server.control.metrics import shown
from server.control.preview import preview as box_preview
from server.control.rewrites import described
from server.http.api.schema_parts import (
    ANY_OBJECT,
    CATALOG_OBJECT,
    ROLE,
    STRING,
    answer,
    catalog_object,
    listing,
    obj,
    query_values,
)
from server.http.api.schema_parts import NAME as NAME_PART
from server.http.guard import guarded, subject
from server.ingest.here import here
from server.services import services

bp = Blueprint("diagrams", __name__, url_prefix="/diagrams")

DOCUMENT = {
    "type": ["string", "object"],
    "maxLength": 1 << 20,
    "description": "the diagram document, as YAML/JSON text or as an object with the sections "
    + ", ".join(SECTIONS)
    + " (docs/ and GET /box-types). Its names, references, types and expressions are checked "
    "by the compiler, which reports every problem with its path (DIAGRAM_INVALID); "
    "POST /diagrams/validate tells without storing.",
}
CQL = {
    "type": "string",
    "maxLength": 1 << 16,
    "description": "the diagram as a CQL script (docs/cql.md), instead of a document",
}
XML = {
    "type": "string",
    "maxLength": 1 << 20,
    "description": "the diagram in the ASSIST paper's XML query form (seed 002, Appendix A; "
    "docs/rewrite.md), instead of a document",
}
NAME = {
    "type": "string",
    "maxLength": 64,
    "description": "the CQL or XML diagram's name (default: CQL's CREATE DIAGRAM, else 'query')",
}
REWRITE = answer(
    {
        "deployer": STRING,
        "added": {"type": "array", "items": ANY_OBJECT},
        "stale": {"type": ["string", "null"]},
    }
)
RUN_STATUS = {
    "enum": ["running", "stopped", "failed"],
    "description": "running or stopped as its owner set it; failed while it is to run but "
    "the runtime has given up on it (a failure after its automatic restarts, or one not "
    "retried), until it is deployed or stopped again",
}
DIAGRAM = catalog_object(
    status=RUN_STATUS,
    document=ANY_OBJECT,
    rewrite={
        **REWRITE,
        "description": "how its deployment was rewritten under access-control policies "
        "(docs/rewrite.md): what was added (filters, projections, widened windows, with the "
        "policies behind them; predicates for the deployer and administrators only) and, "
        "once stopped for it, why its rewrite became stale",
    },
)
CREATED = {
    **DIAGRAM,
    "properties": {
        **DIAGRAM["properties"],
        "objects": {"type": "array", "items": CATALOG_OBJECT},
    },
}
PROBLEM = answer({"code": STRING, "path": STRING, "message": STRING})
CHECKED = {
    "oneOf": [
        answer(
            {"valid": {"const": True}, "plan": ANY_OBJECT, "document": ANY_OBJECT},
            optional=("document",),
        ),
        answer({"valid": {"const": False}, "problems": {"type": "array", "items": PROBLEM}}),
    ]
}
STATUS = answer({"name": STRING, "status": STRING})
COUNT = {"type": "integer", "minimum": 0}
MAYBE_COUNT = {"type": ["integer", "null"], "minimum": 0}
RATE = {"type": "number", "minimum": 0}
OUTPUT_PROGRESS = answer(
    {
        "state_rows": {**COUNT, "description": "rows its state stores hold (windows, joins)"},
        "batch_id": {"type": ["integer", "null"], "description": "the last batch's id"},
        "input_rows": {**COUNT, "description": "rows the last batch read"},
        "input_rows_per_second": RATE,
        "processed_rows_per_second": RATE,
        "batch_duration_ms": MAYBE_COUNT,
        "mode": {
            "type": "string",
            "enum": ["micro-batch", "real-time"],
            "description": "how the output runs (docs/architecture.md, Real-time mode)",
        },
        "mode_reason": {"type": "string", "description": "why it runs in that mode"},
        "batch_phases_ms": {
            "type": "object",
            "additionalProperties": COUNT,
            "description": "the last batch's time by Spark's phases (latestOffset, "
            "queryPlanning, getBatch, addBatch, walCommit, commitOffsets)",
        },
        "batches": {**COUNT, "description": "batches delivered since it started"},
        "rows": {**COUNT, "description": "rows delivered since it started (before the SecFilter)"},
        "last_batch_id": {"type": "integer"},
        "latency_ms": {
            "type": ["number", "null"],
            "description": "for the last batch that delivered results, milliseconds from the "
            "acknowledgement of the newest input tuple it read to their handoff to delivery",
        },
        "subscribers": {
            "type": "array",
            "items": answer(
                {
                    "pending": COUNT,
                    "dropped_batches": COUNT,
                    "dropped_rows": COUNT,
                    "callback_failures": COUNT,
                }
            ),
        },
        "dropped_batches": COUNT,
        "dropped_rows": COUNT,
        "audiences": {
            **COUNT,
            "description": "groups of its subscriptions here decided alike, each batch filtered "
            "and sent once per group",
        },
        "sockets": {**COUNT, "description": "subscriptions receiving it live here"},
        "oldest_position": COUNT,
        "next_position": COUNT,
        "retained_rows": COUNT,
        "rows_waiting": {
            **MAYBE_COUNT,
            "description": "rows its inputs' logs hold that its query has yet to read (null "
            "before its first batch): docs/editor.md, Backlog",
        },
        "event_lag_seconds": {
            "type": ["number", "null"],
            "description": "seconds from the newest event time its last batch read to now",
        },
        "behind": {"type": "boolean", "description": "it falls behind (docs/editor.md)"},
    },
    optional=("mode", "mode_reason"),  # decided when its query is launched
)
BOX_METRICS = answer(
    {
        "rows_in": {
            **MAYBE_COUNT,
            "description": "rows into the box since its deploy (null for an input)",
        },
        "rows_out": {**COUNT, "description": "rows out of the box since its deploy"},
        "batch_rows_in": {**MAYBE_COUNT, "description": "rows into it in the newest batch"},
        "batch_rows_out": {**COUNT, "description": "rows out of it in the newest batch"},
    }
)
RUN_STATE = answer(
    {
        "diagram": STRING,
        "version": STRING,
        "state": {"enum": ["starting", "running", "stopped", "failed"]},
        "error": {
            "type": ["string", "null"],
            "description": "why it failed or stopped, shown whole only to a session that "
            "sees every box's counts (docs/editor.md)",
        },
        "failed_output": {
            "type": ["string", "null"],
            "description": "the output whose query failed, when one did",
        },
        "restarts": COUNT,
        "outputs": {
            "type": "object",
            "additionalProperties": OUTPUT_PROGRESS,
            "description": "per output the session may see the counts of",
        },
        "boxes": {
            "type": "object",
            "additionalProperties": BOX_METRICS,
            "description": "per box the session may see the counts of: rows through it, from "
            "Spark's observed metrics (docs/editor.md)",
        },
        "withheld": {
            "type": "array",
            "items": STRING,
            "description": "the boxes whose counts are not shown: the session may not "
            "READ_TUPLE every source stream they derive from",
        },
        "backlog": {
            "type": "object",
            "additionalProperties": COUNT,
            "description": "per input box the session may see the counts of, the most rows "
            "an output's query has yet to read from its log (what waits on its arrows)",
        },
        "behind": {"type": "boolean", "description": "an output shown falls behind"},
    },
    optional=("version", "restarts", "backlog", "behind"),
)
PROGRESS = answer(
    {"name": STRING, "status": RUN_STATUS, "progress": {"oneOf": [{"type": "null"}, RUN_STATE]}}
)
# Exactly one of a document, a CQL script and the paper's XML query form.
ONE_OF = {"oneOf": [{"required": ["document"]}, {"required": ["cql"]}, {"required": ["xml"]}]}
DEPLOY = {
    "type": "boolean",
    "default": False,
    "description": "also deploy it (as POST /diagrams/{name}/deploy does, which needs "
    "SET_QUERY_STATUS: the owner role's), recorded in the same catalog transaction as the "
    "create; without a runtime nothing is created (RUNTIME_UNAVAILABLE), and if the query "
    "cannot start the diagram stays, stopped, and the answer is that failure",
}
CREATE = {
    **obj(
        {"document": DOCUMENT, "cql": CQL, "xml": XML, "name": NAME, "role": ROLE, "deploy": DEPLOY}
    ),
    **ONE_OF,
}
VALIDATE = {**obj({"document": DOCUMENT, "cql": CQL, "xml": XML, "name": NAME}), **ONE_OF}
PRINT = obj({"document": DOCUMENT}, required=("document",))
PRINTED = answer({"cql": {"type": "string", "description": "the diagram as a CQL script"}})
VERSION_FIELDS = {
    "version": {"type": "integer"},
    "saved_by": STRING,
    "saved_role": STRING,
    "saved_at": {"type": "number", "description": "seconds since the epoch"},
}
VERSIONS = listing("versions", answer(VERSION_FIELDS))
VERSION = answer({**VERSION_FIELDS, "document": {"type": ["object", "null"]}})
PREVIEW = obj(
    {"rows": {"type": "integer", "minimum": 1, "maximum": 1_000, "default": 100}},
)
PREVIEWED = answer(
    {
        "diagram": STRING,
        "box": STRING,
        "fields": {"type": "array", "items": STRING, "description": "the tuples' keys in order"},
        "tuples": {"type": "array", "items": ANY_OBJECT},
    }
)
PART_CHANGE = answer(
    {"part": STRING, "name": STRING, "from": {}, "to": {}}, optional=("from", "to")
)
COMPARED = answer(
    {
        "from": {"type": "integer"},
        "to": {"type": "integer"},
        "added": {"type": "array", "items": PART_CHANGE},
        "removed": {"type": "array", "items": PART_CHANGE},
        "changed": {"type": "array", "items": PART_CHANGE},
    }
)
SWAP = answer(
    {
        "kept": {
            "type": "array",
            "items": STRING,
            "description": "outputs that went on where they were: their windows' and joins' "
            "state and their result positions kept (subscribers miss no result)",
        },
        "dropped": {
            "type": "array",
            "items": answer(
                {
                    "output": STRING,
                    "state": {"type": "array", "items": STRING},
                    "message": STRING,
                }
            ),
            "description": "outputs that start afresh from the newest input, with the boxes "
            "whose state (windows, groups, join buffers) is dropped",
        },
        "new": {"type": "array", "items": STRING, "description": "outputs the old version lacked"},
    }
)
REPLACED = {
    **CREATED,
    "properties": {
        **CREATED["properties"],
        "swap": {
            **SWAP,
            "description": "present when a running diagram was replaced: what each output kept",
        },
    },
}
BOX_NAME = {"box": {**NAME_PART, "x-what": "box"}}
VERSION_NUMBER = {"version": {"type": "integer", "minimum": 1, "maximum": 2**31}}
D = ObjectType.DIAGRAM


def _describe(o) -> dict:
    out = {**o.to_dict(), "status": status_of(here(services()).runtime, o)}
    if o.spec:
        out["document"] = o.document
    return {**out, **described(services().catalog, subject(), o)}


@bp.get("")
@guarded(answer=listing("diagrams", DIAGRAM))
def index():
    """The diagrams the session may view, with their status."""
    svc = services()
    seen, runtime = svc.catalog.objects.lookup(subject()), here(svc).runtime
    listed = [{**o.to_dict(), "status": status_of(runtime, o)} for o in seen if o.type is D]
    return {"diagrams": listed}


@bp.post("")
@guarded(body=CREATE, answer=CREATED, status=201)
def create():
    """Add a diagram (ADD on the system, READ_TUPLE on every input); it starts stopped, or,
    with ``deploy``, running (SET_QUERY_STATUS, its owner role's), recorded in the same
    transaction as the create."""
    created = lifecycle.create(services(), subject(), g.body, g.body.get("deploy", False))
    return {**_describe(created[0]), "objects": [o.to_dict() for o in created]}, 201


@bp.post("/validate")
@guarded(body=VALIDATE, answer=CHECKED)
def check():
    """Check a document, CQL script or XML query against the streams the session may view,
    without storing it; for CQL and XML, also the document it compiles to."""
    svc = services()
    try:
        doc, plan = planned(svc.catalog, subject(), g.body, svc.limits.cost_ceilings())
    except DiagramInvalid as err:
        return {"valid": False, "problems": err.details["problems"]}
    # A derived input's label layout names the source streams of the output it reads, which
    # the session may not be allowed to see: the answer leaves the layout out.
    shown = {k: v for k, v in plan.to_dict().items() if k != "sources"}
    compiled = "cql" in g.body or "xml" in g.body
    return {"valid": True, "plan": shown, **({"document": doc} if compiled else {})}


@bp.post("/cql")
@guarded(body=PRINT, answer=PRINTED)
def cql():
    """The CQL script of a document (the editor's query tab), once the document is valid
    against the streams the session may view; CQL_NOT_EXPRESSIBLE, with the reason at its
    path, when the diagram has no CQL form. Cost ceilings do not apply: nothing runs."""
    svc = services()
    doc, _ = planned(svc.catalog, subject(), g.body)
    return {"cql": to_cql(doc)}


@bp.get("/<name>")
@guarded(answer=DIAGRAM)
def describe(name: str):
    """One diagram, with its document and status."""
    return _describe(services().catalog.objects.get(subject(), D, name))


@bp.put("/<name>")
@guarded(body=VALIDATE, answer=REPLACED)
def update(name: str):
    """Replace the diagram's document (its owner role; the new objects keep that owner),
    validated first: a refusal changes nothing. A running diagram keeps running: the new
    version takes over in one swap, and ``swap`` says per output whether its state (windows,
    joins) and result positions were kept, what state was dropped, and which outputs are new
    (docs/api.md). The old version stays in the version list. Grants on its outputs start
    afresh: a changed query may expose other data, and its owner grants it again deliberately.
    """
    return _replaced(lifecycle.replace(services(), subject(), name, g.body))


def _replaced(replaced: lifecycle.Replaced) -> dict:
    swap = {} if replaced.swap is None else {"swap": replaced.swap}
    return {
        **_describe(replaced.objects[0]),
        "objects": [o.to_dict() for o in replaced.objects],
        **swap,
    }


@bp.post("/<name>/deploy")
@guarded(answer=STATUS)
def deploy(name: str):
    """Start the diagram's query (SET_QUERY_STATUS); it resumes after a server restart."""
    return {"name": name, "status": lifecycle.deploy(services(), subject(), name).status}


@bp.post("/<name>/stop")
@guarded(answer=STATUS)
def stop(name: str):
    """Stop the diagram's query (SET_QUERY_STATUS)."""
    return {"name": name, "status": lifecycle.stop(services(), subject(), name).status}


@bp.get("/<name>/status")
@guarded(answer=PROGRESS)
def status(name: str):
    """Whether the diagram runs, and its query's progress.

    Per output: the last batch's id, input rows and duration, input and processed rows per
    second, delivered batches and rows, subscribers' backlog and losses, its audiences and the
    sockets in them on this server (docs/architecture.md "Delivery"), and latency_ms: for the
    last batch that delivered results, the milliseconds from the acknowledgement of the newest
    input tuple it read to the handoff of its results to delivery; null while the output has
    delivered nothing since it started, or when unknown (a batch replayed after a restart).
    Per box: rows in and out since the deploy and in the newest batch. Counts (and a failure's
    message) are shown only to a session that may READ_TUPLE every source they derive from
    (docs/editor.md); the boxes left out are named in ``withheld``."""
    svc = services()
    o = svc.catalog.objects.get(subject(), D, name)
    runtime = here(svc).runtime
    progress = runtime.status(o.name) if runtime is not None else None
    if progress is not None:
        outputs = progress["outputs"].items()
        progress["outputs"] = {k: {**p, **svc.delivery.audiences(k)} for k, p in outputs}
    return {
        "name": name,
        "status": status_of(runtime, o),
        "progress": shown(svc, runtime, subject(), o.name, progress),
    }


@bp.get("/<name>/boxes/<box>/preview")
@guarded(query=PREVIEW, answer=PREVIEWED, path=BOX_NAME)
def preview(name: str, box: str):
    """A sample of what a box of the running diagram makes of the last ``rows`` tuples of each
    input (the editor's data preview), filtered for the session exactly as an output is: only
    tuples whose every source it may READ_TUPLE now, within its clearance."""
    rows = query_values(request.args, PREVIEW).get("rows", 100)
    return box_preview(services(), subject(), name, box, rows)


@bp.get("/<name>/versions")
@guarded(answer=VERSIONS)
def versions(name: str):
    """Every version of the diagram's document, newest (the one stored now) first: one per
    create and per replacement (PUT), the newest 100 kept; dropping the diagram drops them."""
    found = services().catalog.versions.list(subject(), name)
    return {"versions": [_version(v) for v in found]}


@bp.get("/<name>/versions/<int:version>")
@guarded(answer=VERSION, path=VERSION_NUMBER)
def version(name: str, version: int):
    """One version of the diagram's document: open it in the editor, save it to restore it."""
    found = services().catalog.versions.get(subject(), name, version)
    return {**_version(found), "document": json.loads(found.spec) if found.spec else None}


@bp.get("/<name>/versions/<int:version>/compare/<int:other>")
@guarded(answer=COMPARED, path={**VERSION_NUMBER, "other": VERSION_NUMBER["version"]})
def compare(name: str, version: int, other: int):
    """Two versions side by side: the inputs, boxes and outputs ``other`` added, removed and
    changed (each change with both definitions) since ``version``, and any other setting that
    differs."""
    return versions_.compare(services(), subject(), name, version, other)


@bp.post("/<name>/versions/<int:version>/restore")
@guarded(answer=REPLACED, path=VERSION_NUMBER)
def restore(name: str, version: int):
    """Make an old version the newest again, checked as any replacement (PUT) is; a running
    diagram swaps to it, with ``swap`` saying what state was kept. The version replaced
    stays listed."""
    return _replaced(versions_.restore(services(), subject(), name, version))


def _version(v) -> dict:
    return {
        "version": v.version,
        "saved_by": v.saved_by,
        "saved_role": v.saved_role,
        "saved_at": v.saved_at,
    }


@bp.delete("/<name>")
@guarded(status=204)
def delete(name: str):
    """Drop the diagram with its boxes and outputs (its owner or an administrator)."""
    lifecycle.drop(services(), subject(), name)
    return "", 204
