"""Security basics every response and login gets: headers, cookies, CSRF, size limits.

Sessions are catalog tokens, carried either as ``Authorization: Bearer`` (scripts, the CLI,
socket.io ``auth``) or in the HttpOnly, SameSite=Strict cookie that login sets for the web
pages. A browser sends the cookie by itself, so unsafe methods authenticated by it must also
carry ``X-CSRF-Token``: an HMAC of the session token under the server's secret, which login
returns and which only same-origin script can read (from the body or the non-HttpOnly
``sluice_csrf`` cookie). A bearer token is never sent by the browser on its own, so it needs none.
"""

from __future__ import annotations

import hashlib
import hmac

from flask import Flask, Response, current_app, request

from boxes import codes
from boxes.errors import Denied

SESSION_COOKIE = "sluice_session"
CSRF_COOKIE = "sluice_csrf"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

# The web pages load only their own scripts and styles and talk only to this origin.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}


def csrf_token(session_token: str) -> str:
    key = current_app.config["SECRET_KEY"].encode()
    return hmac.new(key, b"csrf:" + session_token.encode(), hashlib.sha256).hexdigest()


def check_csrf(session_token: str) -> None:
    """Refuse a cookie-authenticated unsafe request without the session's CSRF token."""
    if request.method in SAFE_METHODS:
        return
    sent = request.headers.get(CSRF_HEADER, "")
    if not hmac.compare_digest(sent.encode(), csrf_token(session_token).encode()):
        raise Denied(
            f"a request authenticated by cookie must carry the {CSRF_HEADER} header "
            "returned at login",
            code=codes.CSRF_FAILED,
        )


def set_session_cookies(response: Response, token: str, max_age: int) -> None:
    secure = bool(current_app.config.get("SESSION_COOKIE_SECURE"))
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=max_age,
        httponly=True,
        secure=secure,
        samesite="Strict",
        path="/",
    )
    response.set_cookie(
        CSRF_COOKIE,
        csrf_token(token),
        max_age=max_age,
        httponly=False,
        secure=secure,
        samesite="Strict",
        path="/",
    )


def clear_session_cookies(response: Response) -> None:
    for name in (SESSION_COOKIE, CSRF_COOKIE):
        response.delete_cookie(name, path="/", samesite="Strict")


def _headers(response: Response) -> Response:
    response.headers.update(HEADERS)
    if request.path.startswith("/api/"):
        response.headers["Cache-Control"] = "no-store"
    if request.is_secure:
        response.headers["Strict-Transport-Security"] = "max-age=31536000"
    return response


def init_app(app: Flask, max_request_bytes: int, secure_cookies: bool) -> None:
    app.config.update(
        MAX_CONTENT_LENGTH=max_request_bytes,
        SESSION_COOKIE_SECURE=secure_cookies,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Strict",
    )
    app.after_request(_headers)
