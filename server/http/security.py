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
import math
import threading
import time
from collections import deque
from collections.abc import Callable

from flask import Flask, Response, current_app, request

from boxes import codes
from boxes.errors import Denied, RateLimited

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
    ``QUIET``. So
    someone guessing joe's password from one address is slowed to a crawl there, while joe
    logs in from his own address at once. A success clears its (user, address) key. Checked
    before the password is, so a refused guess costs no bcrypt work. Kept in memory: a restart
    forgets it, which only ever lets more through.
    """

    WINDOW = 60.0
    ADDRESS_FACTOR = 5
    MAX_DELAY = 900.0
    QUIET = 900.0

    def __init__(
        self, limit: Callable[[], int], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit = limit  # the limit in force now (an administrator may change it)
        self.clock = clock
        self._keys: dict[tuple[str, ...], _Failures] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _keys_of(user: str, address: str) -> tuple[tuple[str, ...], ...]:
        return ("address", address), ("user at address", user, address)

    def _limit(self, key: tuple[str, ...]) -> int:
        limit = self.limit()
        return limit * self.ADDRESS_FACTOR if key[0] == "address" else limit

    def check(self, user: str, address: str) -> None:
        now = self.clock()
        with self._lock:
            waits = [
                self._keys[key].blocked_until - now
                for key in self._keys_of(user, address)
                if key in self._keys
            ]
        wait = max(waits, default=0.0)
        if wait > 0:
            raise RateLimited(code=codes.TOO_MANY_LOGINS, retry_after=max(1, math.ceil(wait)))

    def failed(self, user: str, address: str) -> None:
        now = self.clock()
        with self._lock:
            self._forget_quiet(now)
            for key in self._keys_of(user, address):
                self._keys.setdefault(key, _Failures()).add(
                    now, self._limit(key), self.WINDOW, self.MAX_DELAY
                )

    def succeeded(self, user: str, address: str) -> None:
        with self._lock:
            self._keys.pop(self._keys_of(user, address)[1], None)

    def _forget_quiet(self, now: float) -> None:
        """Drop keys quiet for ``QUIET`` after their last delay ended, so memory stays bounded
        by recent attackers and an attacker who waits out each delay keeps doubling it."""
        for key in [
            k for k, f in self._keys.items() if now - max(f.last, f.blocked_until) >= self.QUIET
        ]:
            del self._keys[key]


class _Failures:
    """One key's failures: times within the last window, and the over-limit streak."""

    def __init__(self) -> None:
        self.recent: deque[float] = deque()
        self.streak = 0
        self.last = 0.0
        self.blocked_until = 0.0

    def add(self, now: float, limit: int, window: float, max_delay: float) -> None:
        while self.recent and self.recent[0] <= now - window:
            self.recent.popleft()
        self.recent.append(now)
        self.last = now
        if len(self.recent) >= limit or self.streak:
            self.blocked_until = now + min(max_delay, 2.0**self.streak)
            self.streak += 1


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
