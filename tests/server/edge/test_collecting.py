"""The edge's full garbage collections on its own clock (server/edge/collecting.py), in a
Python process of its own: the policy is process-wide."""

from __future__ import annotations

import subprocess
import sys

# Counts full collections over 2 s with the policy on and the clock at 0.2 s, while young
# containers far exceed the counts that would otherwise start one.
PROBE = """
import asyncio, gc, time
from server.edge import collecting
collecting.FULL_SECONDS = 0.2
full = []
def count(phase, info):
    if phase == "stop" and info["generation"] == 2:
        full.append(1)
gc.callbacks.append(count)
async def main():
    clock = collecting.on_a_clock(None)
    await anext(clock)
    for _ in range(20):
        end = time.monotonic() + 0.05
        while time.monotonic() < end:
            [[i] for i in range(10_000)]
        await asyncio.sleep(0.05)
    print(gc.get_threshold()[2], len(full))
asyncio.run(main())
"""


def test_full_collections_run_only_on_the_clock():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    threshold, full = map(int, done.stdout.split()[:2])
    assert threshold == 2**31 - 1, "CPython's automatic full collections are still on"
    assert 4 <= full <= 12, f"{full} full collections in 2 s on a 0.2 s clock"
