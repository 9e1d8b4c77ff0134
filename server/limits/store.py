"""Where the login throttle and the ingestion rate keep their counts: in this process (the
default), or in Redis (``redis_url``), shared by every server, so several servers enforce one
limit instead of one each.

A limit's state is a small JSON value per key, changed by :meth:`update`: read it, compute the
new value with the limit's own rule (written once, in Python, for both stores) and write it
only if nobody wrote in between. In memory that is a lock; in Redis a compare-and-set script
(one atomic step on the Redis server), retried when another server changed the value first. So
two servers cannot both spend the last allowance. Every value is written with an expiry after
which it means what no value means, so nothing grows without bound.

A limit that cannot be checked is not passed: with Redis unreachable, logins and ingestion are
refused with ``LIMITS_UNAVAILABLE`` (503) rather than let through unthrottled.
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar
from urllib.parse import quote

import redis
from pydantic import SecretStr
from redis.backoff import NoBackoff
from redis.retry import Retry

from boxes import codes
from boxes.errors import Unavailable

log = logging.getLogger(__name__)

T = TypeVar("T")
# A limit's rule: the state held (None: none) -> (the state to hold, None to forget it; seconds
# to keep it; the answer to the caller). States are JSON values (lists, not tuples); a rule
# builds a new state, never changes the one it is given (the memory store hands it its own).
Change = Callable[[Any], tuple[Any, float, T]]

PREFIX = "sluice:"


PLAIN = re.compile(r"[\w.-]*", re.ASCII)


def key(*parts: str) -> str:
    """A store key from its parts, each quoted unless plain, so ``(a:b, c)`` and ``(a, b:c)``
    differ (user names may hold colons, IPv6 addresses do).

    >>> key("login", "user", "joe", "::1"), key("ingest", "12")
    ('login:user:joe:%3A%3A1', 'ingest:12')
    """
    return ":".join(part if PLAIN.fullmatch(part) else quote(part, safe="") for part in parts)


class LimitStore(Protocol):
    def clock(self) -> float:
        """Seconds on the clock every user of this store shares."""

    def get(self, *keys: str) -> list[Any]:
        """The states held under ``keys`` (None for none), in order."""

    def update(self, key: str, change: Change[T]) -> T:
        """Apply ``change`` to the state under ``key`` atomically; return its answer."""

    def delete(self, key: str) -> None: ...

    def close(self) -> None: ...


class MemoryStore:
    """This process's limits, as before several servers: a restart forgets them (which only
    ever lets more through)."""

    SWEEP_EVERY = 60.0

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._values: dict[str, tuple[Any, float]] = {}
        self._lock = threading.Lock()
        self._next_sweep = 0.0

    def get(self, *keys: str) -> list[Any]:
        now = self.clock()
        with self._lock:
            return [self._held(k, now) for k in keys]

    def update(self, key: str, change: Change[T]) -> T:
        now = self.clock()
        with self._lock:
            self._sweep(now)
            value, keep, answer = change(self._held(key, now))
            if value is None or keep <= 0:
                self._values.pop(key, None)
            else:
                self._values[key] = (value, now + keep)
            return answer

    def delete(self, key: str) -> None:
        with self._lock:
            self._values.pop(key, None)

    def close(self) -> None:
        pass

    def _held(self, key: str, now: float) -> Any:
        held = self._values.get(key)
        return None if held is None or held[1] <= now else held[0]

    def _sweep(self, now: float) -> None:
        """Drop expired values, at most once a ``SWEEP_EVERY``: memory stays bounded by the
        keys active recently, at a cost linear in them once a minute."""
        if now < self._next_sweep:
            return
        self._next_sweep = now + self.SWEEP_EVERY
        for k in [k for k, (_, until) in self._values.items() if until <= now]:
            del self._values[k]


# KEYS[1]: the key; ARGV: the value read ('' for none), the value to write ('' to delete), its
# expiry in milliseconds. Writes only if the key still holds what was read.
COMPARE_AND_SET = """
local held = redis.call('GET', KEYS[1])
if (held or '') ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1])
else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
return 1
"""


class RedisStore:
    """Limits in one Redis shared by the servers of an installation, under ``sluice:`` keys.

    The clock is Redis's (its ``TIME``, read once, kept as an offset from this host's clock),
    so servers on hosts whose clocks differ still agree on when a delay ends. Session keys are
    the catalog's session ids: servers sharing a Redis must share the catalog (give another
    installation another Redis, or another database number in the URL).
    """

    ATTEMPTS = 64  # compare-and-set rounds before giving up (each round, one writer wins)
    TIMEOUT = 2.0  # seconds for a connection or an answer

    def __init__(self, url: str, prefix: str = PREFIX) -> None:
        self.prefix = prefix
        self.client = redis.Redis.from_url(
            url,
            socket_timeout=self.TIMEOUT,
            socket_connect_timeout=self.TIMEOUT,
            retry=Retry(NoBackoff(), 1),
            decode_responses=True,
        )
        self._compare_and_set = self.client.register_script(COMPARE_AND_SET)
        self._offset: float | None = None

    def clock(self) -> float:
        if self._offset is None:
            with self._reachable():
                seconds, micros = self.client.time()
            self._offset = seconds + micros / 1e6 - time.time()
        return time.time() + self._offset

    def get(self, *keys: str) -> list[Any]:
        with self._reachable():
            held = self.client.mget([self.prefix + k for k in keys])
        return [None if h is None else json.loads(h) for h in held]

    def update(self, key: str, change: Change[T]) -> T:
        name = self.prefix + key
        with self._reachable():
            for _ in range(self.ATTEMPTS):
                held = self.client.get(name)
                value, keep, answer = change(None if held is None else json.loads(held))
                new = "" if value is None or keep <= 0 else json.dumps(value)
                expiry = max(1, math.ceil(keep * 1000))
                if self._compare_and_set(keys=[name], args=[held or "", new, expiry]):
                    return answer
        raise Unavailable(
            f"limit {key!r} changed by others {self.ATTEMPTS} times in a row",
            code=codes.LIMITS_UNAVAILABLE,
        )

    def delete(self, key: str) -> None:
        with self._reachable():
            self.client.delete(self.prefix + key)

    def close(self) -> None:
        self.client.close()

    @contextmanager
    def _reachable(self) -> Iterator[None]:
        try:
            yield
        except redis.RedisError as err:
            log.error("the shared limits' Redis cannot be reached: %s", err)
            raise Unavailable(code=codes.LIMITS_UNAVAILABLE) from err


def open_store(redis_url: SecretStr | None) -> LimitStore:
    """Redis when the setting names one, else this process's memory."""
    return MemoryStore() if redis_url is None else RedisStore(redis_url.get_secret_value())
