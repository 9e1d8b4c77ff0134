"""Where real-time mode's latency tail sits: rows that wait for Spark to plan the next batch.

    .venv/bin/python -m bench.realtime_gaps [--batches 5,30] [--seconds 60] [--rate 500]

For each batch duration (``realtime_batch_seconds``), a one-stream filter runs in real-time
mode in a fresh runtime; one tuple at a time is appended at ``--rate`` a second for
``--seconds``, and each tuple's latency is timed from its append's acknowledgement to its
row's arrival at the output's tap. Tuples over ``SLOW_MS`` are grouped into bursts (sent
within half a second of each other): after the query's start, each burst is a boundary
between two real-time batches, where Spark commits one batch and plans the next while the
rows arriving meanwhile wait. Reported per duration: p50/p99 after the first batch, the
share of slow tuples there, and the bursts. A probe, not a goal (docs/benchmarks.md, "Real-
time mode's batch"); tests never assert timings.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from bench.end_to_end import quantiles
from bench.runtime_probe import SCHEMA
from boxes.document import validate

SLOW_MS = 100.0  # the real-time goal's p99 (issue 41)
BURST_GAP = 0.5  # seconds between two slow tuples' sends that still make one burst


def diagram():
    doc = {
        "version": 1,
        "name": "gaps",
        "realtime": True,
        "inputs": {"g": {}},
        "boxes": {"kept": {"type": "filter", "in": "g", "where": "price >= 0"}},
        "outputs": {"gaps_out": {"from": "kept"}},
    }
    return validate(doc, {"g": SCHEMA})


def bursts(sent: list[float]) -> list[list[float]]:
    """``sent`` (sorted send times of slow tuples) as [first, last, tuples] bursts."""
    found: list[list[float]] = []
    for at in sent:
        if found and at - found[-1][1] < BURST_GAP:
            found[-1][1:] = [at, found[-1][2] + 1]
        else:
            found.append([at, at, 1])
    return found


def probe(batch: float, seconds: float, rate: int) -> dict:
    from bench import spark_batch
    from server.runtime import Runtime, RuntimeSettings

    arrived: dict[int, float] = {}

    def tap(_output: str, table) -> None:
        now = time.monotonic()
        arrived.update(dict.fromkeys((int(p) for p in table.column("price").to_pylist()), now))

    settings = RuntimeSettings(realtime_slots=1, realtime_batch_seconds=batch)
    with tempfile.TemporaryDirectory() as tmp:
        rt = Runtime(Path(tmp), settings=settings, session=spark_batch.session())
        try:
            rt.create_stream("g", SCHEMA)
            rt.deploy("gaps", diagram(), tap)
            acked: dict[int, float] = {}
            start = time.monotonic()
            for n in range(int(seconds * rate)):
                rt.append("g", [{"time": "2026-01-01T00:00:00", "symbol": "g", "price": float(n)}])
                acked[n] = time.monotonic() - start
                pause = start + (n + 1) / rate - time.monotonic()
                if pause > 0:
                    time.sleep(pause)  # pace the sender: this is the offered rate
            deadline = time.monotonic() + 60
            while len(arrived) < len(acked) and time.monotonic() < deadline:
                time.sleep(0.1)  # poll: the tap counts what arrives
        finally:
            rt.close()
    late = {n: 1000 * (arrived[n] - start - t) for n, t in acked.items() if n in arrived}
    found = bursts(sorted(acked[n] for n, ms in late.items() if ms > SLOW_MS))
    settled = found[0][1] + BURST_GAP if found and found[0][0] < 1 else 0.0  # the start's
    steady = sorted(ms for n, ms in late.items() if acked[n] >= settled)
    p50, p99 = quantiles(steady)
    return {
        "batch_s": batch,
        "tuples": len(acked),
        "arrived": len(late),
        "steady_p50_ms": round(p50, 1),
        "steady_p99_ms": round(p99, 1),
        "steady_slow_pct": round(100 * sum(ms > SLOW_MS for ms in steady) / len(steady), 2),
        "bursts": [[round(a, 2), round(b, 2), int(c)] for a, b, c in found if a >= settled],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", default="5,30", help="batch durations, seconds (>= 5)")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--rate", type=int, default=500)
    args = parser.parse_args()
    rows = [probe(float(b), args.seconds, args.rate) for b in args.batches.split(",")]
    keys = [k for k in rows[0] if k != "bursts"]
    print("| " + " | ".join(keys) + " | slow bursts after the start (first s, last s, tuples) |")
    print("|" + "---|" * (len(keys) + 1))
    for row in rows:
        print("| " + " | ".join(str(row[k]) for k in keys) + f" | {row['bursts']} |")


if __name__ == "__main__":
    main()
