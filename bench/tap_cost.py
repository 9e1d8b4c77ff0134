"""What a tap costs the server: this process's memory and threads with N taps, each handed a batch.

    .venv/bin/python -m bench.tap_cost [--taps 100,1000]

A member of a shared execution has a tap per output (``server/runtime/taps.py``), so this is
the runtime's part of a member's cost in ``bench.scale``'s identical diagrams. Memory is the
anonymous part of this process's PSS (objects, stacks), as ``bench.scale`` reads the app's. The
taps are made one count after the other in one process; every batch is delivered before each
measure.
"""

from __future__ import annotations

import argparse
import gc
import os
import threading

import pyarrow as pa

from bench.proctree import anon_pss_bytes
from bench.scale import counts
from server.runtime.taps import DeliveryPool, Tap

KIB = 1024


class Delivered:
    """A callback that counts the batches and rows handed to it and lets the caller wait for
    a number of either (``bench.overlap`` waits for its rows)."""

    def __init__(self) -> None:
        self.count = 0
        self.rows = 0
        self._changed = threading.Condition()

    def __call__(self, output: str, table: pa.Table) -> None:
        with self._changed:
            self.count += 1
            self.rows += table.num_rows
            self._changed.notify_all()

    def wait_for(self, count: int = 0, rows: int = 0, timeout: float | None = None) -> None:
        with self._changed:
            if not self._changed.wait_for(
                lambda: self.count >= count and self.rows >= rows, timeout
            ):
                raise TimeoutError(f"{self.count} batches, {self.rows} rows after {timeout} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tap_cost", description=__doc__)
    parser.add_argument("--taps", type=counts, default=[100, 1000], help="e.g. 100,1000")
    args = parser.parse_args(argv)
    pool, delivered = DeliveryPool(4), Delivered()
    table = pa.table({"v": [1]})
    taps: list[Tap] = []
    measured = [(0, anon_pss_bytes(os.getpid()), threading.active_count())]
    for count in args.taps:
        while len(taps) < count:
            taps.append(Tap(f"o{len(taps)}", delivered, 64, pool))
            taps[-1].offer(table)
        delivered.wait_for(count)
        gc.collect()
        measured.append((count, anon_pss_bytes(os.getpid()), threading.active_count()))
    base_pss = measured[0][1]
    print("| taps | anonymous PSS added | per tap | threads |\n|---|---|---|---|")
    for count, pss, threads in measured:
        per_tap = f"{(pss - base_pss) / KIB / count:.1f} KiB" if count else "-"
        print(f"| {count} | {(pss - base_pss) / KIB:.0f} KiB | {per_tap} | {threads} |")
    for tap in taps:
        tap.close()
    pool.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
