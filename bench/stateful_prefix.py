"""Identical stateless sub-plans feeding different windows: would sharing them pay on Spark?

    .venv/bin/python -m bench.stateful_prefix [--diagrams 10] [--rows 20000] [--pairs 3]

K diagrams read one stream through the same filter and map, then each aggregates in windows
of its own (sizes and aggregates differ, so no two plans are identical and none is shared
today). A stateful remainder cannot run inside another query's ``foreachBatch`` (its state
spans batches), so the only way to run the common part once is the derived-stream shape: one
query runs the prefix into a result log, and each remainder is a query reading that log. This
bench deploys exactly that with the runtime's own derived streams (``derived``) against the
K diagrams each alone (``alone``), and times from the first append until every diagram has
every window result (a last row an hour later closes the windows). Both run in interleaved
pairs (``harness.compare``); the table gives each side's median, its Spark query count, and
the median per-pair ratio with its spread.
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
from boxes.document import Derived, Plan, validate
from boxes.types import parse_schema

SCHEMA, _ = parse_schema(
    {"fields": {"time": "timestamp", "symbol": "string", "price": "double"}, "event_time": "time"},
    "s",
)
SYMBOLS = ("IBM", "XOM", "BP", "HSBA")
AGGREGATES = ("avg(dear)", "max(dear)", "count()", "sum(dear)", "min(dear)")
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
PREFIX_BOXES = {
    "kept": {"type": "filter", "in": "{in}", "where": "price > 10 AND symbol <> 'BP'"},
    "priced": {
        "type": "map",
        "in": "kept",
        "fields": {"time": "time", "symbol": "symbol", "dear": "price * 1.2"},
    },
}


def window_seconds(i: int) -> int:
    return (5, 10, 15)[i % 3]


def prefix_boxes(source: str) -> dict:
    boxes = {name: dict(box) for name, box in PREFIX_BOXES.items()}
    boxes["kept"]["in"] = source
    return boxes


def aggregate(i: int, source: str) -> dict:
    return {
        "type": "aggregate",
        "in": source,
        "window": {"size": f"{window_seconds(i)}s"},
        "group_by": ["symbol"],
        "aggregates": {"v": AGGREGATES[i % len(AGGREGATES)]},
    }


def alone(i: int) -> dict:
    """Diagram i whole: the stream, the common filter and map, its own windows."""
    boxes = prefix_boxes("in1") | {"windows": aggregate(i, "priced")}
    return {
        "version": 1,
        "name": f"d{i}",
        "inputs": {"in1": {}},
        "boxes": boxes,
        "outputs": {f"d{i}_out": {"from": "windows"}},
    }


PREFIX = {
    "version": 1,
    "name": "pre",
    "inputs": {"in1": {}},
    "boxes": prefix_boxes("in1"),
    "outputs": {"pre_out": {"from": "priced"}},
}


def remainder(i: int) -> dict:
    """Diagram i's windows over the prefix's output (a derived input)."""
    return {
        "version": 1,
        "name": f"d{i}",
        "inputs": {"p": {"output": "pre_out"}},
        "boxes": {"windows": aggregate(i, "p")},
        "outputs": {f"d{i}_out": {"from": "windows"}},
    }


def plans(diagrams: int, derived: bool) -> list[tuple[str, Plan]]:
    """The plans to deploy, upstream first."""
    streams = {"in1": SCHEMA}
    if not derived:
        return [(f"d{i}", validate(alone(i), streams)) for i in range(diagrams)]
    pre = validate(PREFIX, streams)
    reads = {"pre_out": Derived(pre.outputs["pre_out"], pre.label_sources)}
    return [("pre", pre)] + [(f"d{i}", validate(remainder(i), {}, reads)) for i in range(diagrams)]


def expected(diagrams: int, rows: list[dict]) -> int:
    """Window results in all: each diagram's (window, symbol) groups among the kept rows."""
    kept = [r for r in rows if r["price"] > 10 and r["symbol"] != "BP"]
    groups = 0
    for i in range(diagrams):
        size_ms = window_seconds(i) * 1000
        groups += len({(r["ms"] // size_ms, r["symbol"]) for r in kept})
    return groups


def run(spark, diagrams: int, rows: list[dict], derived: bool, found: dict) -> float:
    """One repetition's seconds from the first append to the last window result."""
    from server.runtime import Runtime

    root = Path(tempfile.mkdtemp(prefix="sluice-stateful-prefix-"))
    runtime = Runtime(root, session=spark)
    try:
        runtime.create_stream("in1", SCHEMA)
        counted, ignored = Delivered(), Delivered()
        before = {q.id for q in spark.streams.active}
        for name, plan in plans(diagrams, derived):
            runtime.deploy(name, plan, ignored if name == "pre" else counted)
        found["queries", derived] = len({q.id for q in spark.streams.active} - before)
        sent = [{k: v for k, v in r.items() if k != "ms"} for r in rows]
        closing = {"time": (T0 + timedelta(hours=1)).isoformat(), "symbol": "IBM", "price": 50.0}
        start = time.perf_counter()
        for at in range(0, len(sent), 1000):
            runtime.append("in1", sent[at : at + 1000])
        runtime.append("in1", [closing])
        counted.wait_for(rows=expected(diagrams, rows), timeout=600)
        return time.perf_counter() - start
    finally:
        runtime.close()
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.stateful_prefix", description=__doc__)
    parser.add_argument("--diagrams", type=int, default=10)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args(argv)
    rng = random.Random(2026)
    rows = [
        {
            "time": (T0 + timedelta(milliseconds=n)).isoformat(),
            "symbol": rng.choice(SYMBOLS),
            "price": rng.uniform(0, 100),
            "ms": n,
        }
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
    print(
        f"{args.diagrams} diagrams windowing one filtered stream, {args.rows} rows, "
        f"{args.pairs} pairs"
    )
    print("| run | Spark queries | seconds (median) |")
    print("|---|---|---|")
    print(
        f"| prefix run once, windows derived | {found['queries', True]} "
        f"| {result.secured_median:.2f} |"
    )
    print(f"| each alone | {found['queries', False]} | {result.unsecured_median:.2f} |")
    print(f"derived / alone: {result.ratio:.2f}x [{low:.2f}, {high:.2f}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
