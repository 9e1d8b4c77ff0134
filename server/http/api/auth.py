"""Log in with role activation, log out, and who am I."""
from __future__ import annotations

from flask import Blueprint, g, jsonify, request

from boxes.errors import Unauthenticated
from server.http import security
from server.http.api.schema_parts import obj
from server.control.services import services
from server.http.guard import public, session, subject

bp = Blueprint("auth", __name__, url_prefix="/auth")

LOGIN = obj({"user": {"type": "string", "maxLength": 64},
             "password": {"type": "string", "maxLength": 256},
             "roles": {"type": "array", "items": {"type": "string", "maxLength": 64},
                       "minItems": 1, "maxItems": 64,
                       "description": "the roles to activate; leave out for all the user's"}},
            ("user", "password"))


def _me(token: str, who) -> dict:
    return {"user": who.user_name, "roles": sorted(who.roles),
            "csrf_token": security.csrf_token(token)}


@bp.post("/login")
@public(body=LOGIN)
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
@session()
def logout():
    """End the session; its sockets are disconnected."""
    services().catalog.sessions.logout(subject())
    response = jsonify({"logged_out": True})
    security.clear_session_cookies(response)
    return response


@bp.get("/whoami")
@session()
def whoami():
    """The session's user, its active roles and its CSRF token."""
    return _me(g.token, subject())
