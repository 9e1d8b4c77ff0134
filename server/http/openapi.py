"""``/api/v1/openapi.json``, generated from the routes and the guard's declarations.

Nothing here is written by hand per route: paths and methods come from the URL map, the
summary from the view's docstring, the request body and query schemas from the guard's
declaration, and the security requirement and needed permissions (``x-permissions``) from the
operation's rule in the policy table (``catalog.policy``). A route therefore cannot be
undocumented, and its
documentation cannot drift from what the guard enforces.
"""

from __future__ import annotations

import re

from flask import Flask, current_app

from boxes import codes
from catalog.model import APPLICABLE
from catalog.policy import OPERATIONS
from server.http.api.schema_parts import ACTION, NAME, OBJECT_TYPE, STRING
from server.http.guard import SOCKET, SOCKET_EVENTS, guarded, rule_of

ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "details"],
            "properties": {
                "code": {"type": "string", "enum": sorted(codes.REGISTRY)},
                "message": {"type": "string"},
                "details": {"type": "object"},
            },
        }
    },
}
JSON = "application/json"
# Any other body (NDJSON, CSV, NMEA) is text its own parser judges, not a JSON document: the
# JSON schema of the operation's data would describe something the body is not.
TEXT = {"type": "string"}
PARAM = re.compile(r"<(?:[^:<>]+:)?([^<>]+)>")
# The rules every input follows, wherever it comes in (REST, socket.io, `sluice run`).
INPUT_RULES = (
    "Input rules: a name is an ASCII letter then letters, digits or '_' (a user name may also "
    "hold '.', '@', '-'), at most 64 characters; a body has only its declared keys. In a "
    "tuple every field of its stream's schema is required except the event-time field, "
    "which takes the arrival time when it is left out; null is never a value, in any field; "
    "a time is an ISO-8601 string or seconds since the epoch, in the years 1 to 9999 in "
    "either form (TUPLE_INVALID otherwise, over REST and as a socket.io ack alike). A body "
    "that is not UTF-8 JSON is BAD_JSON; a body, document, expression, CQL script or policy "
    "XML nested deeper than 64 levels is TOO_DEEP; every socket.io event, known or not, is "
    "acknowledged."
)
# Path parameters by name (a route may declare others in ``path=``).
PATH = {"type_": OBJECT_TYPE, "action": ACTION, "role": NAME, "name": NAME}


def _operation(rule, method: str, view) -> dict:
    access = view.sluice_access
    doc = (view.__doc__ or "").strip()
    summary, _, description = doc.partition("\n")
    op = {
        "operationId": f"{rule.endpoint.removeprefix('api.')}.{method.lower()}",
        "summary": summary or rule.endpoint,
        "tags": [rule.endpoint.split(".")[-2] if "." in rule.endpoint else "meta"],
        "responses": {
            str(access.status): _success(access),
            "4XX": {
                "description": "refused",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
            },
        },
    }
    if description.strip():
        op["description"] = " ".join(description.split())
    path = {**PATH, **(access.path or {})}
    params = [
        {"name": name, "in": "path", "required": True, "schema": path.get(name, STRING)}
        for name in sorted(rule.arguments)
    ]
    query = access.query or {}
    required = set(query.get("required", ()))
    for name, schema in (query.get("properties") or {}).items():
        params.append({"name": name, "in": "query", "required": name in required, "schema": schema})
    if params:
        op["parameters"] = params
    needs = rule_of(rule.endpoint)
    assert needs is not None  # create_app refuses an endpoint the policy table does not list
    op["security"] = [] if needs.public else [{"bearer": []}, {"cookie": []}]
    op["x-permissions"] = str(needs)
    if method in ("POST", "PUT", "PATCH") and (access.body or access.shape):
        schema = access.body or access.shape
        op["requestBody"] = {
            "required": True,
            "content": {c: {"schema": schema if c == JSON else TEXT} for c in access.content},
        }
    return op


def _success(access) -> dict:
    if access.answer is None:
        return {"description": "done, nothing to say"}
    return {"description": "success", "content": {"application/json": {"schema": access.answer}}}


def _link(paths: dict) -> None:
    """Link what a POST creates to the operations on it (``POST /x`` answers a ``name``;
    ``/x/{name}...`` takes it), so a stateful fuzzer reaches the objects it created."""
    for path, item in paths.items():
        created = item.get("post", {}).get("responses", {}).get("201")
        if created is None:
            continue
        links = created.setdefault("links", {})
        for other, other_item in paths.items():
            if not other.startswith(path + "/{name}"):
                continue
            for op in other_item.values():
                links[op["operationId"]] = {
                    "operationId": op["operationId"],
                    "parameters": {"name": "$response.body#/name"},
                }


def spec(app: Flask) -> dict:
    paths: dict[str, dict] = {}
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        if not rule.rule.startswith("/api/"):
            continue
        view = app.view_functions[rule.endpoint]
        item = paths.setdefault(PARAM.sub(r"{\1}", rule.rule), {})
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            item[method.lower()] = _operation(rule, method, view)
    _link(paths)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Sluice API",
            "version": "1",
            "description": "Secure multi-user stream processing. Errors always have the "
            "shape {error: {code, message, details}}. " + INPUT_RULES,
        },
        "paths": paths,
        "components": {
            "schemas": {"Error": ERROR},
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "the token returned by POST /api/v1/auth/login",
                },
                "cookie": {
                    "type": "apiKey",
                    "in": "cookie",
                    "name": "sluice_session",
                    "description": "set by login; unsafe methods also need X-CSRF-Token",
                },
            },
        },
        "x-applicable-actions": {
            category: sorted(a.value for a in actions) for category, actions in APPLICABLE.items()
        },
        "x-socketio-events": {
            name: {"payload": a.body, "x-permissions": str(OPERATIONS[SOCKET + name])}
            for name, a in SOCKET_EVENTS.items()
        },
    }


def init_app(app: Flask) -> None:
    @app.get("/api/v1/openapi.json")
    @guarded(answer={"type": "object", "required": ["openapi", "info", "paths", "components"]})
    def openapi_json():
        """This description of the API."""
        return spec(current_app)
