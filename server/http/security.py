"""Security basics every response and login gets: headers, cookies, CSRF, throttling, size limits.

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
import threading
import time
from collections import deque
from typing import Callable

from flask import Flask, Response, current_app, request

from boxes import codes
from boxes.errors import Denied, RateLimited

SESSION_COOKIE = "sluice_session"
CSRF_COOKIE = "sluice_csrf"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

# The web pages load only their own scripts and styles and talk only to this origin.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
       "frame-ancestors 'none'; form-action 'self'")
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
        raise Denied(code=codes.CSRF_FAILED, header=CSRF_HEADER)


def set_session_cookies(response: Response, token: str, max_age: int) -> None:
    secure = bool(current_app.config.get("SESSION_COOKIE_SECURE"))
    response.set_cookie(SESSION_COOKIE, token, max_age=max_age, httponly=True, secure=secure,
                        samesite="Strict", path="/")
    response.set_cookie(CSRF_COOKIE, csrf_token(token), max_age=max_age, httponly=False,
                        secure=secure, samesite="Strict", path="/")


def clear_session_cookies(response: Response) -> None:
    for name in (SESSION_COOKIE, CSRF_COOKIE):
        response.delete_cookie(name, path="/", samesite="Strict")


class Throttle:
    """At most ``limit`` failed logins a minute per user name and per client address.

    Checked before the password is, so a guessing run costs the server no bcrypt work once
    it is refused; both keys are counted so that neither one user nor one address can be
    sprayed. Kept in memory: a restart forgets it, which only ever lets more through.
    """

    WINDOW = 60.0

    def __init__(self, limit: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.clock = clock
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, key: str, now: float) -> deque[float]:
        times = self._failures.setdefault(key, deque())
        while times and times[0] <= now - self.WINDOW:
            times.popleft()
        return times

    def check(self, user: str, address: str) -> None:
        now = self.clock()
        with self._lock:
            for key in (f"user:{user}", f"addr:{address}"):
                times = self._recent(key, now)
                if len(times) >= self.limit:
                    wait = max(1, int(times[0] + self.WINDOW - now + 1))
                    raise RateLimited(code=codes.TOO_MANY_LOGINS, retry_after=wait)

    def failed(self, user: str, address: str) -> None:
        now = self.clock()
        with self._lock:
            for key in (f"user:{user}", f"addr:{address}"):
                self._recent(key, now).append(now)


def _headers(response: Response) -> Response:
    response.headers.update(HEADERS)
    if request.path.startswith("/api/"):
        response.headers["Cache-Control"] = "no-store"
    if request.is_secure:
        response.headers["Strict-Transport-Security"] = "max-age=31536000"
    return response


def init_app(app: Flask, max_request_bytes: int, secure_cookies: bool) -> None:
    app.config.update(MAX_CONTENT_LENGTH=max_request_bytes, SESSION_COOKIE_SECURE=secure_cookies,
                      SESSION_COOKIE_HTTPONLY=True, SESSION_COOKIE_SAMESITE="Strict")
    app.after_request(_headers)
