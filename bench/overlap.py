"""Overlapping diagrams (seed 000, section 5): K diagrams filtering one union differently,
run with their prefix shared (``server/runtime/overlap.py``) against each alone.

    .venv/bin/python -m bench.overlap [--diagrams 10] [--rows 20000] [--pairs 3]

Each repetition deploys the K diagrams in a fresh runtime (sharing on, or off), sends the same
rows to the union's two streams in batches of 1,000, and times from the first append until
every diagram has received every row its filter keeps; it also counts the Spark queries the
runtime runs. Shared and alone run in interleaved pairs (``harness.compare``); the table gives
each side's median and the median of the per-pair ratios with their spread.
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from bench import spark_batch
from bench.harness import compare
from bench.tap_cost import Delivered
from boxes.document import validate
from boxes.types import parse_schema

SCHEMA, _ = parse_schema(
    {"fields": {"time": "timestamp", "symbol": "string", "price": "double"}, "event_time": "time"},
    "s",
)
SYMBOLS = ("IBM", "XOM", "BP", "HSBA")
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def document(i: int) -> dict:
    """Diagram i: the union of in1 and in2, kept where one symbol is dear (a condition each
    has: ``price > 10``; and two of its own)."""
    where = f"price > 10 AND symbol = '{SYMBOLS[i % 4]}' AND price < {20 + 8 * i}"
    return {
        "version": 1,
        "name": f"d{i}",
        "inputs": {"in1": {}, "in2": {}},
        "boxes": {
            "merged": {"type": "union", "in": ["in1", "in2"]},
            "kept": {"type": "filter", "in": "merged", "where": where},
        },
        "outputs": {f"d{i}_out": {"from": "kept"}},
    }


def kept_by(i: int, row: dict) -> bool:
    return 10 < row["price"] < 20 + 8 * i and row["symbol"] == SYMBOLS[i % 4]


def run(spark, diagrams: int, rows: list[tuple[str, dict]], share: bool, found: dict) -> float:
    """One repetition's seconds from the first append to the last wanted row."""
    from server.runtime import Runtime, RuntimeSettings

    root = Path(tempfile.mkdtemp(prefix="sluice-overlap-"))
    runtime = Runtime(root, session=spark, settings=RuntimeSettings(share_plans=share))
    try:
        for stream in ("in1", "in2"):
            runtime.create_stream(stream, SCHEMA)
        counted = Delivered()
        before = {q.id for q in spark.streams.active}
        for i in range(diagrams):
            plan = validate(document(i), {"in1": SCHEMA, "in2": SCHEMA})
            runtime.deploy(f"d{i}", plan, counted)
        wanted = sum(kept_by(i, row) for i in range(diagrams) for _, row in rows)
        found["queries", share] = len({q.id for q in spark.streams.active} - before)
        start = time.perf_counter()
        for stream in ("in1", "in2"):
            mine = [row for s, row in rows if s == stream]
            for at in range(0, len(mine), 1000):
                runtime.append(stream, mine[at : at + 1000])
        counted.wait_for(rows=wanted, timeout=600)
        return time.perf_counter() - start
    finally:
        runtime.close()
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.overlap", description=__doc__)
    parser.add_argument("--diagrams", type=int, default=10)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args(argv)
    rng = random.Random(2026)
    rows = [
        (
            rng.choice(("in1", "in2")),
            {
                "time": (T0 + timedelta(milliseconds=n)).isoformat(),
                "symbol": rng.choice(SYMBOLS),
                "price": rng.uniform(0, 100),
            },
        )
        for n in range(args.rows)
    ]
    spark = spark_batch.session()
    found: dict = {}
    result = compare(
        lambda: run(spark, args.diagrams, rows, True, found),
        lambda: run(spark, args.diagrams, rows, False, found),
        args.pairs,
    )
    low, high = result.spread
    print(f"{args.diagrams} diagrams filtering one union, {args.rows} rows, {args.pairs} pairs")
    print("| run | Spark queries | seconds (median) |")
    print("|---|---|---|")
    print(f"| prefix shared | {found['queries', True]} | {result.secured_median:.2f} |")
    print(f"| each alone | {found['queries', False]} | {result.unsecured_median:.2f} |")
    print(f"shared / alone: {result.ratio:.2f}x [{low:.2f}, {high:.2f}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
