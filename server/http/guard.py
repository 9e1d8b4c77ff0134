"""The one way a view or socket handler is reached: through its rule in the policy table.

Deny by default. Every view is decorated ``@guarded(...)`` and every socket handler
``@socket_event(...)``; what each operation needs (a session or none, and which permissions on
which objects) is its entry in ``catalog.policy.OPERATIONS``, keyed by the endpoint's name
(``schemas.create``) or ``socket.EVENT``. A view without the decorator, or whose operation the
table does not list, is refused before it runs (and ``create_app`` refuses to start with one),
so a new route can never be left open by forgetting a check, and nothing checks permissions
by hand in a view. The guard authenticates the caller (bearer token, or cookie plus CSRF
token), puts the subject in ``g.subject``, validates the JSON body, then asks the catalog to
authorize the operation with the objects its path and body name. The same declarations feed
the OpenAPI description.

A route declares what it reads; its rule in the table says what it needs, for example::

    @bp.post("/schemas")
    @guarded(body=SCHEMA_BODY)
    def create(): ...

A route that needs the runtime and may be served by any server says so, ``@guarded(...,
forward=True)``: where the runtime is held elsewhere, the guard passes the request on.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

import jsonschema
from flask import Flask, current_app, g, request

from boxes import codes
from boxes.errors import InvalidInput, NotFound, Problem, SluiceError, Unauthenticated
from boxes.limits import json_children, nests_too_deep, too_deep
from catalog import INVALID_SESSION, Subject
from catalog.model import NAME as NAME_RE
from catalog.model import USER_NAME as USER_NAME_RE
from catalog.model import name_problem
from catalog.policy import OPERATIONS, Rule
from server.http import security
from server.http.errors import answer
from server.http.forward import forwarded
from server.services import services

SOCKET = "socket."  # socket event NAME is operation ``socket.NAME``


@dataclass(frozen=True)
class Access:
    """What a view or socket event reads (for validation and OpenAPI); what it needs is its
    operation's rule in the policy table."""

    body: Mapping[str, Any] | None = None
    content: tuple[str, ...] = ("application/json",)
    query: Mapping[str, Any] | None = None
    answer: Mapping[str, Any] | None = None  # the success answer's schema (None: no content)
    status: int = 200
    path: Mapping[str, Any] | None = None  # path parameters' schemas, beside the usual ones
    shape: Mapping[str, Any] | None = None  # the body, when the view reads it itself


def operation(endpoint: str | None) -> str | None:
    """The policy table's name for an endpoint: ``api.diagrams.update`` -> ``diagrams.update``."""
    return endpoint.removeprefix("api.") if endpoint else None


def rule_of(endpoint: str | None) -> Rule | None:
    name = operation(endpoint)
    return OPERATIONS.get(name) if name else None


def _refuse_unlisted() -> NoReturn:
    current_app.logger.error("refused %s: the policy table does not list it", request.endpoint)
    raise NotFound("no such resource")


def guarded(
    body=None,
    content=("application/json",),
    query=None,
    answer=None,
    status=200,
    path=None,
    shape=None,
    forward=False,
) -> Callable:
    """Reach the view only as its operation's rule in the policy table allows; ``answer`` and
    ``status`` describe its success for the OpenAPI description. With ``forward``, a request
    this server has authorized but whose runtime is held elsewhere goes on to the runtime
    lease's holder, whose answer is the answer (``server.http.forward``); the view runs only
    where the runtime is, or when no server holds it."""
    access = Access(body, tuple(content), query, answer, status, path, shape)
    for schema in (body, answer):
        if schema is not None:
            jsonschema.Draft202012Validator.check_schema(schema)

    def mark(view: Callable) -> Callable:
        @functools.wraps(view)
        def run(*args, **kwargs):
            rule = rule_of(request.endpoint)
            if rule is None:
                _refuse_unlisted()
            if not rule.public:
                g.subject = authenticate()
            if path is not None:
                _check_path(path)
            if body is not None:
                g.body = json_body(body)
            if not rule.public:  # after the body: a rule may name an object in it
                named = {
                    **(g.body if isinstance(g.get("body"), dict) else {}),
                    **(request.view_args or {}),
                }
                services().catalog.authorize(g.subject, operation(request.endpoint), named)
            if forward and (passed := forwarded(services())) is not None:
                return passed
            return view(*args, **kwargs)

        run.sluice_access = access  # type: ignore[attr-defined]
        return run

    return mark


def _check_path(schemas: Mapping[str, Any]) -> None:
    """Path parameters against their declared schemas (a version beyond SQLite's integers
    would otherwise reach the database): ``INVALID_PARAMETER`` naming the first that fails."""
    values = request.view_args or {}
    for name, schema in schemas.items():
        if name in values and not jsonschema.Draft202012Validator(schema).is_valid(values[name]):
            raise InvalidInput(code=codes.INVALID_PARAMETER, name=name, details={"parameter": name})


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
        raise InvalidInput(
            "expected a JSON body (Content-Type: application/json)", code=codes.BAD_JSON
        )
    value = loads(request.get_data(cache=True) or b"null")
    if nests_too_deep(value, json_children):  # before the schema check walks it
        raise InvalidInput(too_deep("the JSON body"), code=codes.TOO_DEEP)
    check(value, schema)
    return value


def loads(raw: bytes, where: str = "") -> Any:
    """JSON text (UTF-8, as RFC 8259 requires) as a value; ``BAD_JSON`` says what is wrong in
    words of JSON (``Expecting value at line 1, column 5``), never the parser's insides
    (recursion limits, codec names). Nesting too deep for the parser is ``TOO_DEEP``; tuples
    nested less are refused by their fields' types, other bodies by ``json_body``."""
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        reason = "it is not UTF-8 text"
    except RecursionError:
        what = too_deep("the JSON body", where.rstrip(": "))
        raise InvalidInput(what, code=codes.TOO_DEEP) from None
    except json.JSONDecodeError as err:
        reason = f"{err.msg} at line {err.lineno}, column {err.colno}"
    raise InvalidInput(code=codes.BAD_JSON, reason=where + reason) from None


def check(value: Any, schema: Mapping[str, Any]) -> None:
    errors = sorted(
        jsonschema.Draft202012Validator(schema).iter_errors(value),
        key=lambda e: list(e.absolute_path),
    )
    if errors:
        problems = [
            Problem(_code(e), ".".join(str(p) for p in e.absolute_path), _message(e)).to_dict()
            for e in errors[:20]
        ]
        summary = "; ".join(f"{p['path'] or 'body'}: {p['message']}" for p in problems[:3])
        found = {p["code"] for p in problems}
        code = found.pop() if len(found) == 1 else codes.INVALID_BODY
        raise InvalidInput(summary, code=code, details={"problems": problems})


def _code(error: jsonschema.ValidationError) -> str:
    """A value of the right JSON type that a piece refuses (its pattern, enum or length)
    answers the piece's own code (``x-code``), if it names one."""
    if error.validator != "type" and isinstance(error.schema, Mapping):
        return codes.lookup(error.schema.get("x-code", codes.INVALID_BODY))
    return codes.INVALID_BODY


def _message(error: jsonschema.ValidationError) -> str:
    """A refused name is told in the catalog's words (what it must look like), not as the
    regular expression it failed; anything else in JSON Schema's."""
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    if schema.get("x-code") == codes.INVALID_NAME and isinstance(error.instance, str):
        what = schema.get("x-what", "the")
        pattern = USER_NAME_RE if what == "user" else NAME_RE
        return name_problem(error.instance, what, pattern)
    return error.message[:200]


def unguarded(app: Flask) -> list[str]:
    """Endpoints without the guard or without a rule in the policy table, and socket events
    without a rule: there must be none."""
    return sorted(
        [
            e
            for e, view in app.view_functions.items()
            if getattr(view, "sluice_access", None) is None or rule_of(e) is None
        ]
        + [SOCKET + name for name in SOCKET_EVENTS if SOCKET + name not in OPERATIONS]
    )


def _deny_unguarded() -> None:
    if request.endpoint is None:
        return
    view = current_app.view_functions.get(request.endpoint)
    if getattr(view, "sluice_access", None) is None or rule_of(request.endpoint) is None:
        _refuse_unlisted()


# Socket events: name -> Access, for the authorization matrix and the documentation.
SOCKET_EVENTS: dict[str, Access] = {}


def socket_event(name: str, body: Mapping[str, Any]) -> Callable:
    """Guard a socket.io handler: the connection's session is re-checked on every event, the
    payload validated, operation ``socket.NAME`` authorized with the objects the payload names,
    and any error comes back as the ack ``{"error": ...}``."""
    SOCKET_EVENTS[name] = Access(body)

    def mark(handler: Callable) -> Callable:
        @functools.wraps(handler)
        def run(*args):
            try:
                who = services().connections.subject(request.sid)
                payload = args[0] if len(args) == 1 else list(args)
                check(payload, body)
                services().catalog.authorize(
                    who, SOCKET + name, payload if isinstance(payload, dict) else {}
                )
                return handler(who, payload)
            except SluiceError as err:
                return answer(err)

        return run

    return mark


def _options():
    """OPTIONS names the methods of the route it matched, as OpenAPI reads paths (a concrete
    ``/diagrams/validate`` wins over ``/diagrams/{name}``), not of every route the path fits."""
    if request.method == "OPTIONS" and request.url_rule is not None:
        response = current_app.response_class(status=204)
        path = request.url_rule.rule
        rules = [r for r in current_app.url_map.iter_rules() if r.rule == path]
        methods = set().union(*(r.methods or () for r in rules))
        response.headers["Allow"] = ", ".join(sorted(methods))
        return response
    return None


def init_app(app: Flask) -> None:
    app.before_request(_deny_unguarded)
    app.before_request(_options)
