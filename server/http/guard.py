"""The one way a view or socket handler is reached: through a declared, checked access rule.

Deny by default. Every view is decorated ``@public(...)`` or ``@session(...)``; a view with
neither is refused before it runs (and ``create_app`` refuses to start with one), so a new
route can never be left open by forgetting a check. ``@session`` authenticates the caller
(bearer token, or cookie plus CSRF token) and puts the subject in ``g.subject``; what the
subject may do is then decided by the catalog inside each operation, never by hand here.
The same declaration validates the JSON body and feeds the OpenAPI description.

>>> @bp.post("/schemas")
... @session(body=SCHEMA_BODY)
... def create(): ...
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import jsonschema
from flask import Flask, current_app, g, request

from boxes import codes
from boxes.errors import InvalidInput, NotFound, Problem, SluiceError, Unauthenticated
from catalog import Subject
from catalog.core import INVALID_SESSION
from server.http import security
from server.control.services import services
from server.http.errors import body as error_body

PUBLIC, SESSION = "public", "session"


@dataclass(frozen=True)
class Access:
    """What a view or socket event requires, and what it reads (for validation and OpenAPI)."""

    kind: str
    body: Mapping[str, Any] | None = None
    content: tuple[str, ...] = ("application/json",)
    query: Mapping[str, Any] | None = None


def _rule(kind: str, body=None, content=("application/json",), query=None) -> Callable:
    access = Access(kind, body, tuple(content), query)
    if body is not None:
        jsonschema.Draft202012Validator.check_schema(body)

    def mark(view: Callable) -> Callable:
        @functools.wraps(view)
        def guarded(*args, **kwargs):
            if kind == SESSION:
                g.subject = authenticate()
            if body is not None:
                g.body = json_body(body)
            return view(*args, **kwargs)

        guarded.sluice_access = access
        return guarded

    return mark


public = functools.partial(_rule, PUBLIC)
session = functools.partial(_rule, SESSION)


def bearer_token() -> str | None:
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated(INVALID_SESSION)
    return token.strip()


def authenticate() -> Subject:
    """The request's subject; a cookie-borne session must also pass the CSRF check."""
    catalog = services().catalog
    token = bearer_token()
    if token is None:
        token = request.cookies.get(security.SESSION_COOKIE)
        if token is None:
            raise Unauthenticated(INVALID_SESSION)
        subject = catalog.sessions.resolve(token)
        security.check_csrf(token)
    else:
        subject = catalog.sessions.resolve(token)
    g.token = token
    return subject


def subject() -> Subject:
    return g.subject


def json_body(schema: Mapping[str, Any]) -> Any:
    """The request's JSON, checked against ``schema``; every problem reported with its path."""
    if not request.is_json:
        raise InvalidInput("expected a JSON body (Content-Type: application/json)",
                           code=codes.BAD_JSON)
    try:
        value = json.loads(request.get_data(cache=True) or b"null")
    except (ValueError, UnicodeDecodeError, RecursionError) as err:
        raise InvalidInput(code=codes.BAD_JSON, reason=str(err)[:120]) from None
    check(value, schema)
    return value


def check(value: Any, schema: Mapping[str, Any]) -> None:
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(value),
                    key=lambda e: list(e.absolute_path))
    if errors:
        problems = [Problem(codes.INVALID_BODY, ".".join(str(p) for p in e.absolute_path),
                            e.message[:200]).to_dict() for e in errors[:20]]
        summary = "; ".join(f"{p['path'] or 'body'}: {p['message']}" for p in problems[:3])
        raise InvalidInput(summary,
                           code=codes.INVALID_BODY, details={"problems": problems})


def unguarded(app: Flask) -> list[str]:
    """Endpoints with no declared access rule: there must be none."""
    return sorted(e for e, view in app.view_functions.items()
                  if getattr(view, "sluice_access", None) is None)


def _deny_unmarked() -> None:
    if request.endpoint is None:
        return
    view = current_app.view_functions.get(request.endpoint)
    if getattr(view, "sluice_access", None) is None:
        current_app.logger.error("refused %s: the endpoint has no access rule", request.endpoint)
        raise NotFound("no such resource")


# Socket events: name -> Access, for the authorization matrix and the documentation.
SOCKET_EVENTS: dict[str, Access] = {}


def socket_event(name: str, body: Mapping[str, Any]) -> Callable:
    """Guard a socket.io handler: the connection's session is re-checked on every event, the
    payload validated, and any error comes back as the ack ``{"error": ...}``."""
    SOCKET_EVENTS[name] = Access(SESSION, body)

    def mark(handler: Callable) -> Callable:
        @functools.wraps(handler)
        def guarded(*args):
            try:
                who = services().connections.subject(request.sid)
                payload = args[0] if len(args) == 1 else list(args)
                check(payload, body)
                return handler(who, payload)
            except SluiceError as err:
                return error_body(err.code, err.message, err.details)

        return guarded

    return mark


def init_app(app: Flask) -> None:
    app.before_request(_deny_unmarked)
