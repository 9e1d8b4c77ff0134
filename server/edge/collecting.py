"""The edge's full garbage collections on its own clock.

A full collection (CPython's oldest generation) passes over every object the edge holds, and it
holds many per socket: at 10,000 sockets each took 0.5-0.9 s, in which no socket was written
and no request answered, and CPython started one every 10-30 s while sockets pinged and
batches went out (docs/benchmarks.md, "Merging at the edge"). The edge process turns the
automatic full collections off and runs one every ``FULL_SECONDS``: young garbage is collected
as before (generations 0 and 1, milliseconds each), and reference cycles that lived long
enough to reach the oldest generation wait at most that long to be freed.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import AsyncIterator

log = logging.getLogger(__name__)
FULL_SECONDS = 300.0
NEVER = 2**31 - 1  # a threshold the count of younger collections never passes


async def on_a_clock(_app: object) -> AsyncIterator[None]:
    """An aiohttp cleanup context: a full collection every ``FULL_SECONDS`` on the loop while
    the edge serves, and no other."""
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, NEVER)
    task = asyncio.create_task(_every(FULL_SECONDS))
    yield
    task.cancel()


async def _every(seconds: float) -> None:
    while True:
        await asyncio.sleep(seconds)
        started = time.perf_counter()
        freed = gc.collect()
        took = 1000 * (time.perf_counter() - started)
        log.debug("a full collection freed %d objects in %.0f ms", freed, took)
