"""Security basics every response and login gets: headers, cookies, CSRF, throttling, size limits.

Sessions are catalog tokens, carried either as ``Authorization: Bearer`` (scripts, the CLI,
socket.io ``auth``) or in the HttpOnly, SameSite=Strict cookie that login sets for the web
pages. A browser sends the cookie by itself, so unsafe methods authenticated by it must also
carry ``X-CSRF-Token``: an HMAC of the session token under the server's secret, which login
returns and which only same-origin script can read (from the body or the non-HttpOnly
``sluice_csrf`` cookie). A bearer token is never sent by the browser on its own, so it needs none.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import math
from collections.abc import Callable

from flask import Flask, Response, current_app, request

from boxes import codes
from boxes.errors import Denied, RateLimited
from server.http.limitstore import LimitStore, MemoryStore, key

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


class Throttle:
    """Failed logins slow down the address that makes them, never the account they aim at.

    OWASP's guidance: no lockout an attacker can trigger against a user. Failures are counted
    per (user, address), limited to ``limit`` a minute, and per client address, limited to
    ``ADDRESS_FACTOR`` times that (one address may be a shared gateway). From the limit-th
    failure within a minute on, each failure makes its key wait before the next attempt, twice
    as long each time (1 s, 2 s, 4 s ... up to ``MAX_DELAY``), until the key stays quiet for
    ``QUIET``. So someone guessing joe's password from one address is slowed to a crawl there,
    while joe logs in from his own address at once. A success clears its (user, address) key.
    Checked before the password is, so a refused guess costs no bcrypt work. The counts live in
    a ``limitstore``: this process's memory (a restart forgets them, which only ever lets more
    through), or Redis shared by several servers, so failures through one slow down the others.
    """

    WINDOW = 60.0
    ADDRESS_FACTOR = 5
    MAX_DELAY = 900.0
    QUIET = 900.0

    def __init__(
        self,
        limit: Callable[[], int],
        store: LimitStore | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.limit = limit  # the limit in force now (an administrator may change it)
        self.store = store if store is not None else MemoryStore()
        self.clock = clock or self.store.clock

    @staticmethod
    def _keys_of(user: str, address: str) -> tuple[str, str]:
        return key("login", "address", address), key("login", "user", user, address)

    def check(self, user: str, address: str) -> None:
        now = self.clock()
        held = self.store.get(*self._keys_of(user, address))
        wait = max((f["until"] - now for f in held if f is not None), default=0.0)
        if wait > 0:
            raise RateLimited(code=codes.TOO_MANY_LOGINS, retry_after=max(1, math.ceil(wait)))

    def failed(self, user: str, address: str) -> None:
        now, limit = self.clock(), self.limit()
        by_address, by_user = self._keys_of(user, address)
        for k, allowed in ((by_address, limit * self.ADDRESS_FACTOR), (by_user, limit)):
            self.store.update(k, functools.partial(self._failure, now=now, limit=allowed))

    def succeeded(self, user: str, address: str) -> None:
        self.store.delete(self._keys_of(user, address)[1])

    def _failure(self, held: dict | None, now: float, limit: int) -> tuple[dict, float, None]:
        """One key's failures after one more: the times within the last window (the last
        ``limit`` of them are all the rule needs), the over-limit streak and the delay's end.
        A key quiet for ``QUIET`` after its last delay ended starts afresh (and is forgotten
        then), so an attacker who waits out each delay keeps doubling it."""
        if held is None or now - max(held["last"], held["until"]) >= self.QUIET:
            held = {"recent": [], "streak": 0, "last": now, "until": 0.0}
        recent = [*(t for t in held["recent"] if t > now - self.WINDOW), now][-limit:]
        streak, until = held["streak"], held["until"]
        if len(recent) >= limit or streak:
            until = now + min(self.MAX_DELAY, 2.0 ** min(streak, 30))
            streak += 1
        state = {"recent": recent, "streak": streak, "last": now, "until": until}
        return state, max(now, until) + self.QUIET - now, None


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
