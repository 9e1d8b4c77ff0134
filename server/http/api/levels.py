"""Chinese-Wall levels (administrators): conflict-of-interest classes and companies, the company
of each input stream, each user's organisation and each role's clearance (``catalog.levels``).
"""

from __future__ import annotations

from flask import Blueprint, g

from boxes.levels import BOTTOM, TOP
from server.http.api.schema_parts import NAME, STRING, STRINGS, USER_NAME, answer, obj
from server.http.guard import guarded, subject
from server.services import services

bp = Blueprint("levels", __name__, url_prefix="/levels")

COMPANY = {**NAME, "not": {"enum": [TOP]}, "description": "a company (not 'T')"}
ENTRY = {
    "type": "string",
    "description": f"a company of the class, '{TOP}' (all of them) or '{BOTTOM}' (none)",
}
LEVEL = {
    "type": "object",
    "propertyNames": NAME,
    "additionalProperties": ENTRY,
    "maxProperties": 64,
    "description": "per conflict-of-interest class, a company or T; a class left out is ⊥",
}
STREAM_LEVEL = answer(
    {"company": STRING, "multilevel": {"type": "boolean"}}, optional=("company", "multilevel")
)
CONFIGURATION = answer(
    {
        "classes": {
            "type": "array",
            "items": answer({"name": STRING, "companies": STRINGS}),
        },
        "streams": {"type": "object", "additionalProperties": STREAM_LEVEL},
        "organisations": {"type": "object", "additionalProperties": STRING},
        "clearances": {"type": "object", "additionalProperties": LEVEL},
    }
)
CREATED = answer({"name": STRING})
NAMED = obj({"name": NAME}, ("name",))


@bp.get("")
@guarded(answer=CONFIGURATION)
def show():
    """Classes with their companies (in order), stream companies, organisations, clearances."""
    return services().catalog.levels.configuration(subject())


@bp.post("/classes")
@guarded(body=NAMED, answer=CREATED, status=201)
def add_class():
    """Add a conflict-of-interest class (its companies come one by one)."""
    services().catalog.levels.add_class(subject(), g.body["name"])
    return {"name": g.body["name"]}, 201


@bp.delete("/classes/<name>")
@guarded(status=204)
def drop_class(name: str):
    """Drop a class that has no company left."""
    services().catalog.levels.drop_class(subject(), name)
    return "", 204


@bp.post("/classes/<name>/companies")
@guarded(body=obj({"name": COMPANY}, ("name",)), answer=CREATED, status=201)
def add_company(name: str):
    """Add a company to a class; it gets a label bit never given before (64 in all)."""
    services().catalog.levels.add_company(subject(), name, g.body["name"])
    return {"name": g.body["name"]}, 201


@bp.delete("/companies/<name>")
@guarded(status=204)
def drop_company(name: str):
    """Drop a company no stream, organisation or clearance names."""
    services().catalog.levels.drop_company(subject(), name)
    return "", 204


@bp.put("/streams/<name>")
@guarded(
    body=obj(
        {"company": {**COMPANY, "type": ["string", "null"]}, "multilevel": {"type": "boolean"}}
    ),
    answer=STREAM_LEVEL,
)
def set_stream(name: str):
    """Set how an input stream's tuples get their level at admission: a company, multilevel
    (each tuple takes its sender's organisation; a company given as well wins), or public
    (neither). Tuples already admitted keep theirs."""
    body = g.body
    return services().catalog.levels.set_stream(
        subject(), name, body.get("company"), bool(body.get("multilevel"))
    )


@bp.put("/roles/<name>")
@guarded(body=obj({"clearance": LEVEL}, ("clearance",)), answer=answer({"clearance": LEVEL}))
def set_clearance(name: str):
    """Set a role's clearance; ``{}`` clears it for public data only. Subscribers' deliveries
    follow from the next batch on."""
    return {
        "clearance": services().catalog.levels.set_clearance(subject(), name, g.body["clearance"])
    }


@bp.put("/users/<name>")
@guarded(
    body=obj({"organisation": {**COMPANY, "type": ["string", "null"]}}, ("organisation",)),
    answer=answer({"organisation": {"type": ["string", "null"]}}),
    path={"name": USER_NAME},
)
def set_organisation(name: str):
    """Set the company a user sends for on multilevel streams (null: none)."""
    company = services().catalog.levels.set_organisation(subject(), name, g.body["organisation"])
    return {"organisation": company}
