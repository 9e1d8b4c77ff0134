"""The login throttle: failed logins slow down the address that makes them."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

from boxes import codes
from boxes.errors import RateLimited
from server.limits.store import LimitStore, MemoryStore, key


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
    a limit store: this process's memory (a restart forgets them, which only ever lets more
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
