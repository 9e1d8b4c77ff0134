"""Outputs: the ones the session may view, one output's schema, and its recent results."""

from __future__ import annotations

import pyarrow as pa
from flask import Blueprint, request

from catalog import ObjectType
from server.http.api.schema_parts import (
    ANY_OBJECT,
    STRING,
    answer,
    catalog_object,
    listing,
    obj,
    query_values,
)
from server.http.guard import guarded, subject
from server.ingest.here import here
from server.runtime.outputs import Asked
from server.services import services

bp = Blueprint("outputs", __name__, url_prefix="/outputs")
OUTPUT = ObjectType.OUTPUT
DESCRIBED = catalog_object(schema=ANY_OBJECT, semantic={"enum": ["strong", "weak"]})
RECENT = answer({"output": STRING, "tuples": {"type": "array", "items": ANY_OBJECT}})
POSITION = {"type": "integer", "minimum": 0, "maximum": 2**62}
READ = obj(
    {
        "from": {**POSITION, "description": "the row position to read from (0: the start)"},
        "log": {
            "type": "string",
            "maxLength": 64,
            "description": "the result log `from` is a position of (a `log` seen with `next`): "
            "one started afresh since answers 409 RESULTS_RESTARTED; without it, `from` is "
            "read in the current log",
        },
        "limit": {"type": "integer", "minimum": 1, "maximum": 10_000, "default": 1_000},
    },
    ("from",),
)
RESULTS = answer(
    {
        "output": STRING,
        "tuples": {"type": "array", "items": ANY_OBJECT},
        "from": POSITION,
        "next": POSITION,
        "oldest": POSITION,
        "log": {**STRING, "description": "the result log's identity, new when it starts afresh"},
        "policies": {
            "type": "array",
            "description": "on an output security punctuations govern: the tuples' policies "
            "in runs, in order (docs/socketio.md, the policy event)",
            "items": obj(
                {
                    "roles": {"type": "array", "items": STRING},
                    "tuples": {"type": "integer", "minimum": 1},
                },
                ("roles", "tuples"),
            ),
        },
    },
    optional=("policies",),
)


def _describe(o) -> dict:
    """The output, with its schema and semantic (strong or weak) once it has been deployed."""
    out = o.to_dict()
    delivery = services().delivery
    schema = delivery.schemas.get(o.name)
    if schema is not None:
        out["schema"] = schema.to_dict()
        out["semantic"] = delivery.semantics[o.name]
    return out


@bp.get("")
@guarded(answer=listing("outputs", DESCRIBED))
def index():
    """The outputs the session may view."""
    seen = services().catalog.objects.lookup(subject())
    return {"outputs": [_describe(o) for o in seen if o.type is OUTPUT]}


@bp.get("/<name>")
@guarded(answer=DESCRIBED)
def describe(name: str):
    """One output, with its schema once its diagram has been deployed."""
    return _describe(services().catalog.objects.get(subject(), OUTPUT, name))


@bp.get("/<name>/recent")
@guarded(answer=RECENT, forward=True)
def recent(name: str):
    """The latest results (SUBSCRIBE), filtered by the session's permissions as they are now;
    a reader whose policies rewrite the diagram differently reads its running variant's
    (docs/rewrite.md). Answered by the server that runs the runtime (another passes the
    request on to it)."""
    svc = services()
    runtime = here(svc).runtime
    key = svc.catalog.objects.get(subject(), OUTPUT, name).name
    route = svc.delivery.route(subject(), key)  # a variant's, if the reader's rewrite differs
    table = runtime.recent(route) if runtime is not None else None
    rows = [] if table is None else svc.delivery.visible_rows(subject(), route, table)
    return {"output": name, "tuples": rows}


@bp.post("/<name>/variant")
@guarded(answer=answer({"output": STRING, "route": STRING}), forward=True)
def variant(name: str):
    """The runtime output the session reads for this one (SUBSCRIBE): the output itself, or
    the variant its policies rewrite the output's diagram into (docs/rewrite.md), started if
    it does not run. For a server that relays results to the session's socket (docs/deploy.md,
    "Results on any server"): a variant no socket here reads stops after the linger
    (``variant_linger_seconds``) unless asked for again. Answered by the server that runs the
    runtime (another passes the request on to it)."""
    svc = services()
    here(svc).needed()  # a variant starts on the runtime here (``svc.variants``)
    key = svc.catalog.objects.get(subject(), OUTPUT, name).name
    route = svc.delivery.route(subject(), key, start=True)
    if route == key:  # the output itself, told by the name asked for (``catalog.names``)
        return {"output": name, "route": name}
    svc.variants.left(route)  # asked for, not read here: it lingers, then stops
    return {"output": name, "route": route}


@bp.get("/<name>/results")
@guarded(query=READ, answer=RESULTS, forward=True)
def results(name: str):
    """A running output's results from a position in its durable result log, paged (SUBSCRIBE),
    filtered by the session's permissions as they are now, like live delivery. ``next`` is
    where to read on; a position retention has dropped answers ``410 RESULTS_EXPIRED`` naming
    the oldest position still kept. Live ``tuples`` events carry ``next`` too, so a client
    that lost its connection reads what it missed from there. A reader whose policies rewrite
    the diagram differently reads its running variant's own log (docs/rewrite.md). On an
    output security punctuations govern, ``policies`` says which of the session's roles each
    run of the tuples' policy lets read them (as the ``policy`` event does). Answered by the
    server that runs the runtime (another passes the request on to it)."""
    query = query_values(request.args, READ)
    svc = services()
    runtime = here(svc).needed()
    key = svc.catalog.objects.get(subject(), OUTPUT, name).name
    route = svc.delivery.route(subject(), key)
    asked = Asked(name, query.get("log"))
    read = runtime.results(route, query["from"], query.get("limit", 1_000), asked)
    table = pa.concat_tables(read.tables) if read.tables else None
    rows: list[dict] = []
    policies = None
    if table is not None:
        rows, policies = svc.delivery.visible_policies(subject(), route, table)
    found = {"output": name, "tuples": rows, "from": read.start, "next": read.next}
    found["oldest"], found["log"] = read.oldest, read.log
    if policies is not None:
        found["policies"] = policies
    return found
