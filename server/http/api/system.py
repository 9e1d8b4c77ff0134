"""The system's health, and settings an administrator may change while the server runs
(CHANGE_SYSTEM, audited).

Only limits are changeable here (``server.settings.limits``); where data lives, the secret and
TLS stay in the config file. A change is kept in the catalog and outlasts restarts until reset.
"""

from __future__ import annotations

from flask import Blueprint, g

from server.control.lease import LEASE as LEASE_NAME
from server.edge.link import edge_frames
from server.http.api.schema_parts import answer, obj
from server.http.guard import guarded, subject
from server.ingest.here import here
from server.realtime.extension import socketio_of
from server.services import services
from server.settings import limits

bp = Blueprint("system", __name__, url_prefix="/system")

CHANGE_ONE = {
    **limits.LIMIT,
    "type": ["integer", "null"],
    "description": "the new limit; null gives the setting back to its configured value",
}
CHANGE = {**obj({name: CHANGE_ONE for name in limits.CHANGEABLE}), "minProperties": 1}
VALUES = answer({name: limits.LIMIT for name in limits.CHANGEABLE})
SETTINGS = answer({"settings": VALUES, "configured": VALUES})
DRIVER = answer(
    {
        "pid": {"type": ["integer", "null"]},
        "alive": {"type": "boolean"},
        "restarts": {"type": "integer", "minimum": 0},
    }
)
LEASE = answer(
    {
        "holder": {"type": "string", "description": "the server running the runtime"},
        "this_server": {"type": "boolean"},
        "seconds_left": {"type": "number", "description": "until it ends unless renewed"},
    }
)
MEMBER = answer(
    {
        "diagram": {"type": "string"},
        "state": {"type": "string"},
        "joined_at": {
            "type": ["object", "null"],
            "additionalProperties": {"type": "integer", "minimum": 0},
            "description": "per output, the shared result log's position it joined at",
        },
        "filters": {
            "type": "array",
            "items": {"type": "string"},
            "description": "a prefix's member: the conditions of its own filters",
        },
        "fields": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": "a prefix's member: the fields of the map that ends its plan",
        },
    },
    optional=("filters", "fields"),
)
SHARED = {
    "type": "array",
    "description": "each shared execution: diagrams whose plans differ only in names, or only "
    "in the filters (and map) that end them, run once",
    "items": answer(
        {
            "key": {"type": "string", "description": "the plans' key (names aside)"},
            "state": {"type": "string"},
            "shares": {
                "enum": ["plan", "prefix"],
                "description": "the whole plan, or the part before its members' own filters",
            },
            "common_conditions": {
                "type": "integer",
                "minimum": 0,
                "description": "a running prefix: conditions all its members' filters have, "
                "evaluated once",
            },
            "members": {"type": "array", "items": MEMBER},
        },
        optional=("common_conditions",),
    ),
}
REALTIME = answer(
    {
        "slots": {
            "type": "integer",
            "minimum": 0,
            "description": "Spark task slots real-time queries may hold, all told "
            "(realtime_slots; 0: real-time mode is off)",
        },
        "in_use": {"type": "integer", "minimum": 0, "description": "the slots they hold now"},
    }
)
FRAMES = answer({"queued": {"type": "integer"}, "dropped": {"type": "integer"}})
# The sockets' result frames per output (server/edge/): waiting in sockets' queues, and lost by
# sockets that fell behind (each told ``missed``); null when gunicorn holds the sockets.
EDGE = answer({"outputs": {"type": "object", "additionalProperties": FRAMES}})
RUNTIME = answer(
    {
        "runtime": {
            "oneOf": [
                {"type": "null"},
                answer(
                    {
                        "listener_bus": {"type": ["object", "null"]},
                        "driver": DRIVER,
                        "realtime": REALTIME,
                        "shared": SHARED,
                    }
                ),
            ]
        },
        "lease": {"oneOf": [{"type": "null"}, LEASE]},
        "edge": {"oneOf": [{"type": "null"}, EDGE]},
    }
)


def _answer(values: dict) -> dict:
    return {"settings": values, "configured": dict(services().limits.configured)}


@bp.get("/status")
@guarded(answer=RUNTIME)
def status():
    """How the stream runtime fares (administrators): Spark's listener-bus counters, among them
    the events each queue dropped, and the Spark driver (its process, whether it answers, how
    often it was replaced), and which diagrams share one execution (docs/architecture.md
    "Shared execution"); ``null`` without the runtime. ``lease``: which server of those on
    this catalog runs the runtime (docs/deploy.md "The runtime lease"), ``null`` if none does."""
    svc = services()
    held = svc.catalog.leases.holder(LEASE_NAME)
    lease = held and {
        "holder": held.holder,
        "this_server": svc.lease is not None and held.holder == svc.lease.holder,
        "seconds_left": round(held.seconds_left, 3),
    }
    runtime = here(svc).runtime
    edge = edge_frames(socketio_of().server)
    if runtime is None:
        return {"runtime": None, "lease": lease, "edge": edge}
    return {
        "runtime": {
            "listener_bus": runtime.listener_bus(),
            "driver": runtime.driver(),
            "realtime": runtime.realtime(),
            "shared": runtime.shared(),
        },
        "lease": lease,
        "edge": edge,
    }


@bp.get("/settings")
@guarded(answer=SETTINGS)
def show():
    """The changeable settings in force, and their configured values (administrators)."""
    return _answer(services().limits.values())


@bp.patch("/settings")
@guarded(body=CHANGE, answer=SETTINGS)
def change():
    """Change settings: all or none, each audited with its old and new value.

    A change is kept in the catalog and stays in force across restarts, over the config file
    and environment, until it is reset with null."""
    svc = services()
    return _answer(limits.change(svc.limits, svc.catalog, subject(), g.body))
