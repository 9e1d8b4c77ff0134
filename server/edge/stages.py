"""When one result batch passes each stage of its way out, for ``bench.fanout``'s stage table.

Off unless ``BENCH_STAGE_LOG`` names a file (not ``SLUICE_``: that prefix is the settings'):
then the app (handoff, decision, channel send) and the edge (receipt, queued, first and last
socket write) append one JSON line per stage of each batch, ``{"stage", "output", "next", "t"}``
(``t``: wall-clock seconds, comparable across the server's processes on one machine; ``next``:
the batch's place in its output's result log, which keys it). Each line is one ``O_APPEND``
write, so processes do not interleave.
"""

from __future__ import annotations

import json
import os
import time

LOG = os.environ.get("BENCH_STAGE_LOG")
ON = bool(LOG)


def mark(stage: str, output: str, position: int, at: float | None = None) -> None:
    """``output``'s batch ending at ``position`` passed ``stage`` (now, or ``at``)."""
    if not LOG:
        return
    line = {"stage": stage, "output": output, "next": position, "t": at or time.time()}
    with open(LOG, "a", encoding="utf-8") as log:
        log.write(json.dumps(line) + "\n")


class Writes:
    """The first and last socket write of each batch on an edge, marked once the batch's
    writes are over (none for ``QUIET`` seconds): one line a batch, not one a socket."""

    QUIET = 1.0

    def __init__(self) -> None:
        self._seen: dict[tuple[str, int], list[float]] = {}

    def wrote(self, output: str, position: int) -> None:
        now = time.time()
        first_last = self._seen.setdefault((output, position), [now, now])
        first_last[1] = now

    def flush(self) -> None:
        """Mark the batches written to their last socket (called every second)."""
        now = time.time()
        for key, (first, last) in list(self._seen.items()):
            if now - last >= self.QUIET:
                del self._seen[key]
                mark("first_write", *key, first)
                mark("last_write", *key, last)
