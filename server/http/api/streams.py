"""Input streams: create, list, describe, delete, and ingestion of tuples into them."""

from __future__ import annotations

from flask import Blueprint, g, request

from boxes import codes
from boxes.errors import InvalidInput
from boxes.types import parse_schema
from catalog import ObjectType
from server.http.api.schema_parts import (
    ANY_OBJECT,
    NAME,
    ROLE,
    answer,
    catalog_object,
    listing,
    obj,
)
from server.http.guard import guarded, loads, subject
from server.ingest.admission import ingest
from server.ingest.csv_tuples import read_csv
from server.ingest.here import here
from server.ingest.nmea import read_nmea
from server.services import services

bp = Blueprint("streams", __name__, url_prefix="/streams")

CREATE = obj({"name": NAME, "schema": NAME, "role": ROLE}, ("name", "schema"))
NDJSON = "application/x-ndjson"
CSV = "text/csv"
NMEA = "text/x-nmea"
STREAM = catalog_object(schema=ANY_OBJECT)
TUPLES = {
    "type": "array",
    "items": {"type": "object"},
    "description": "tuples, each an object with the stream's fields (its schema: GET "
    "/streams/{name}); every field is required but the event-time field, which takes the "
    "arrival time when left out; null is never a value; a time is an ISO-8601 string or "
    "epoch seconds in the years 1 to 9999. One bad tuple refuses the batch (TUPLE_INVALID). "
    'On a stream security punctuations govern, items may also be sps ({"sp": {...}} or '
    '{"sp": "INSERT SP ...", "ts": N}) and a tuple names its policy with "_stamp": '
    '{"ts": N, "csn": M} (docs/punctuations.md; SP_INVALID). On a multilevel stream a '
    'tuple may state its Chinese-Wall level with "_level": {"banks": "A"} ({} public) or '
    '"[A, ⊥]", which the sender\'s clearance or organisation must dominate; without one it '
    "takes the sender's organisation (docs/levels.md; LEVEL_NOT_CLEARED, "
    "LEVEL_NO_ORGANISATION).",
}
GOVERNANCE = answer({"governed": {"type": "boolean"}, "tid_field": {"type": ["string", "null"]}})
SET_GOVERNANCE = obj(
    {"governed": {"type": "boolean"}, "tid_field": {**NAME, "type": ["string", "null"]}},
    ("governed",),
)
SP_ITEM = {
    "type": "object",
    "description": "an sp in its JSON form (docs/punctuations.md), without ts and sn",
}
SERVER_POLICY = {
    "type": ["array", "null"],
    "items": SP_ITEM,
    "maxItems": 256,
    "description": "the server's own sps (null: none)",
}
COMBINE = {
    "type": "string",
    "enum": ["intersect", "union"],
    "description": "how the server's sps combine with a provider's mutable sps (003 section "
    "4.2): intersect (the default: they only narrow) or union (they may widen)",
}
SERVER_POLICY_ANSWER = answer({"server_policy": SERVER_POLICY, "combine": COMBINE})
SET_SERVER_POLICY = obj({"server_policy": SERVER_POLICY, "combine": COMBINE}, ("server_policy",))
APPENDED = answer(
    {"stream": {"type": "string"}, "first_seq": {"type": "integer"}, "count": {"type": "integer"}}
)


def _describe(o) -> dict:
    out = o.to_dict()
    schemas = services().catalog.objects.stream_schemas(subject(), [o.name])
    if o.name in schemas:
        out["schema"] = schemas[o.name]
    return out


@bp.get("")
@guarded(answer=listing("streams", STREAM))
def index():
    """The input streams the session may view."""
    seen = services().catalog.objects.lookup(subject())
    return {
        "streams": [_describe(o) for o in seen if o.type is ObjectType.STREAM and o.kind == "input"]
    }


@bp.post("")
@guarded(body=CREATE, answer=STREAM, status=201)
def create():
    """Add an input stream of a schema the session may view; it gets a new source index.

    Its ingestion log is created with it; if that fails, the stream is dropped again."""
    svc = services()
    runtime = here(svc).unless_standby()
    created = svc.catalog.objects.add_stream(
        subject(), g.body["name"], g.body["schema"], g.body.get("role")
    )
    if runtime is not None:
        schema, _ = parse_schema(
            svc.catalog.objects.stream_schemas(subject(), [created.name])[created.name],
            created.name,
        )
        try:
            runtime.create_stream(created.name, schema)
        except Exception:
            svc.catalog.objects.drop(subject(), ObjectType.STREAM, created.name)
            raise
    return _describe(created), 201


@bp.get("/<name>")
@guarded(answer=STREAM)
def describe(name: str):
    """One stream, with its schema."""
    return _describe(services().catalog.objects.get(subject(), ObjectType.STREAM, name))


@bp.delete("/<name>")
@guarded(status=204)
def delete(name: str):
    """Drop an input stream no diagram reads (its owner or an administrator); its log goes too."""
    svc = services()
    runtime = here(svc).unless_standby()
    svc.catalog.objects.drop(subject(), ObjectType.STREAM, name)
    if runtime is not None:
        runtime.drop_stream(name)
    return "", 204


def _tuples(name: str) -> list:
    """A JSON array, NDJSON (one object a line) when sent as ``application/x-ndjson``, or CSV
    with a header row naming the stream's fields when sent as ``text/csv``, or AIS sentences
    (``!AIVDM``, one a line) when sent as ``text/x-nmea``."""
    raw = request.get_data(cache=True)
    if request.mimetype == CSV:
        return read_csv(raw, here(services()).needed().log.schema(name))
    if request.mimetype == NMEA:
        return read_nmea(raw, here(services()).needed().log.schema(name), name)
    if request.mimetype == NDJSON:
        return [
            loads(line, f"line {number}: ")
            for number, line in enumerate(raw.splitlines(), 1)
            if line.strip()
        ]
    if request.is_json:
        return loads(raw or b"null")
    raise InvalidInput(
        f"send a JSON array (application/json), NDJSON ({NDJSON}), CSV ({CSV}) or AIS "
        f"NMEA ({NMEA})",
        code=codes.BAD_JSON,
    )


@bp.get("/<name>/server_policy")
@guarded(answer=SERVER_POLICY_ANSWER)
def server_policy(name: str):
    """The server's own security policy for a governed stream (administrators)."""
    return services().catalog.punctuations.server_policy(subject(), name)


@bp.put("/<name>/server_policy")
@guarded(body=SET_SERVER_POLICY, answer=SERVER_POLICY_ANSWER)
def set_server_policy(name: str):
    """Set or remove (null) the server's own sps for a governed stream (administrators;
    003 section 4.2): they combine with what the provider's mutable sps grant the tuples
    admitted from now on, by intersection (the default) or union; an immutable sp's grant
    and every denial stay."""
    return services().catalog.punctuations.set_server_policy(
        subject(), name, g.body["server_policy"], g.body.get("combine", "intersect")
    )


@bp.post("/<name>/tuples")
@guarded(
    content=("application/json", NDJSON, CSV, NMEA), answer=APPENDED, shape=TUPLES, forward=True
)
def append(name: str):
    """Append tuples (WRITE on the stream); answered once they are durable (by the server
    that runs the runtime: another passes the request on to it)."""
    return ingest(services(), subject(), name, lambda: _tuples(name))


@bp.get("/<name>/punctuations")
@guarded(answer=GOVERNANCE)
def punctuations(name: str):
    """Whether security punctuations govern the stream, and its tuple identifier field."""
    return services().catalog.punctuations.governance(subject(), name)


@bp.put("/<name>/punctuations")
@guarded(body=SET_GOVERNANCE, answer=GOVERNANCE)
def set_punctuations(name: str):
    """Govern an input stream by the sps its writers send (its owner or an administrator),
    naming the field sps' tuple patterns test (docs/punctuations.md), or stop. Tuples already
    logged keep the policy label they were admitted with."""
    body = g.body
    return services().catalog.punctuations.set_governance(
        subject(), name, body["governed"], body.get("tid_field")
    )
