"""The ingestion rate: how many tuples a session may send a second."""

from __future__ import annotations

from collections.abc import Callable

from boxes import codes
from boxes.errors import RateLimited
from server.limits.store import LimitStore, MemoryStore, key


class TupleRate:
    """A token bucket per session: ``per_second()`` tuples a second (the limit in force, which an
    administrator may change), bursts of one second's worth. Kept in a limit store, so servers
    sharing Redis hold one bucket per session between them."""

    def __init__(
        self,
        per_second: Callable[[], int],
        store: LimitStore | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.per_second = per_second
        self.store = store if store is not None else MemoryStore()
        self.clock = clock or self.store.clock

    def take(self, session_id: int, count: int) -> None:
        now, rate = self.clock(), self.per_second()
        wait = self.store.update(
            key("ingest", str(session_id)), lambda held: _take(held, now, float(rate), count)
        )
        if wait:
            raise RateLimited(code=codes.INGEST_RATE_LIMITED, retry_after=wait, per_second=rate)


def _take(held: list | None, now: float, rate: float, count: int) -> tuple[list, float, int]:
    """The bucket after taking ``count`` tokens, or unchanged but refilled with the seconds to
    wait; kept until it would be full again (then it is what no bucket means)."""
    tokens, at = held if held is not None else (rate, now)
    tokens = min(rate, tokens + max(0.0, now - at) * rate)  # hosts' clocks may differ a little
    at = max(at, now)
    wait = 0 if count <= tokens else max(1, int((count - tokens) / rate + 1))
    if not wait:
        tokens -= count
    return [tokens, at], (rate - tokens) / rate + 1.0, wait
