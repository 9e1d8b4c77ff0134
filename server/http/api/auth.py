"""Log in with role activation, log out, who am I, and change one's own password."""

from __future__ import annotations

from flask import Blueprint, g, jsonify, request

from boxes.errors import Denied, Unauthenticated
from server.http import security
from server.http.api.schema_parts import ANY_OBJECT, PASSWORD, ROLE_NAME, STRING, answer, obj
from server.http.guard import guarded, subject
from server.services import services

bp = Blueprint("auth", __name__, url_prefix="/auth")

LOGIN = obj(
    {
        "user": {"type": "string", "maxLength": 64},
        "password": {"type": "string", "maxLength": 256},
        "roles": {
            "type": "array",
            "items": ROLE_NAME,
            "minItems": 1,
            "maxItems": 64,
            "description": "the roles to activate; leave out for all the user's",
        },
    },
    ("user", "password"),
)


CHANGE_PASSWORD = obj(
    {"old_password": {"type": "string", "maxLength": 256}, "new_password": PASSWORD},
    ("old_password", "new_password"),
)
BOOLEAN = {"type": "boolean"}
ME = {"user": STRING, "roles": {"type": "array", "items": STRING}, "csrf_token": STRING}
SESSION = answer({**ME, "token": STRING, "expires_in": {"type": "integer", "minimum": 1}})


def _me(token: str, who) -> dict:
    return {
        "user": who.user_name,
        "roles": sorted(who.roles),
        "csrf_token": security.csrf_token(token),
    }


@bp.post("/login")
@guarded(body=LOGIN, answer=SESSION)
def login():
    """Open a session with the given roles active (all of the user's roles if none are named).

    The token comes back in the body (for ``Authorization: Bearer``) and in an HttpOnly,
    SameSite=Strict cookie (for the web pages, which then send ``X-CSRF-Token``).
    """
    svc = services()
    name, address = g.body["user"], request.remote_addr or "?"
    svc.throttle.check(name, address)
    try:
        token, who = svc.catalog.sessions.login(name, g.body["password"], g.body.get("roles"))
    except Unauthenticated:
        svc.throttle.failed(name, address)
        raise
    svc.throttle.succeeded(name, address)
    ttl = svc.settings.session_ttl_seconds
    response = jsonify({**_me(token, who), "token": token, "expires_in": ttl})
    security.set_session_cookies(response, token, ttl)
    return response


@bp.post("/logout")
@guarded(answer=answer({"logged_out": {"const": True}}))
def logout():
    """End the session; its sockets are disconnected."""
    services().catalog.sessions.logout(subject())
    response = jsonify({"logged_out": True})
    security.clear_session_cookies(response)
    return response


@bp.get("/whoami")
@guarded(answer=answer({**ME, "attributes": ANY_OBJECT}))
def whoami():
    """The session's user, its active roles, its CSRF token, and the user's own attributes
    (``self.NAME`` in policies: a port's boundary, a company's ships), which the live map
    draws and which the user's rewritten diagrams already show as literals."""
    who = subject()
    attributes = services().catalog.core.snapshot.attributes.get(who.user_id, {})
    return {**_me(g.token, who), "attributes": dict(attributes)}


CAPABILITIES = answer({"operations": {"type": "object", "additionalProperties": BOOLEAN}})


@bp.get("/capabilities")
@guarded(answer=CAPABILITIES)
def capabilities():
    """What the session may do: for every operation that names no object but the system,
    whether it is allowed now.

    The pages ask this (``users.index``: the admin console; ``diagrams.create``: a palette to
    save with) instead of trying a route, which would record a denial in the audit log for
    every session refused. Nothing is audited; it answers only about the caller."""
    return {"operations": services().catalog.capabilities(subject())}


@bp.get("/capabilities/<type_>/<name>")
@guarded(answer=CAPABILITIES)
def capabilities_of(type_: str, name: str):
    """What the session may do here: the answer of ``/auth/capabilities`` and every operation on
    this object (``streams.delete``: its Delete button; ``permissions.of``), unaudited.

    An object the session may not view answers NOT_FOUND, exactly like a missing one."""
    return {"operations": services().catalog.capabilities(subject(), type_, name)}


@bp.post("/password")
@guarded(body=CHANGE_PASSWORD, answer=answer({"user": STRING, "changed": {"const": True}}))
def change_password():
    """Change the session's own password, proving the current one; other sessions end.

    A wrong current password answers WRONG_PASSWORD (403) and counts as a failed login for the
    login throttle (TOO_MANY_LOGINS, 429, once over the limit); this session stays open. The
    change, or the failed attempt, is audited as ``password_change``."""
    svc, who = services(), subject()
    address = request.remote_addr or "?"
    svc.throttle.check(who.user_name, address)
    try:
        svc.catalog.accounts.change_own_password(
            who, g.body["old_password"], g.body["new_password"]
        )
    except Denied:
        svc.throttle.failed(who.user_name, address)
        raise
    svc.throttle.succeeded(who.user_name, address)
    return {"user": who.user_name, "changed": True}
