"""Measure the runtime on this machine: durable append rate, Spark cold start, end-to-end
latency (append acknowledged -> output callback) and the idle CPU of 10 deployed diagrams.

    .venv/bin/python -m bench.runtime_probe [--samples 200] [--idle-seconds 30]

Numbers go to docs/architecture.md; tests never assert timings.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

from bench.proctree import tree_cpu_seconds
from boxes.document import validate
from boxes.types import parse_schema
from server.ingest import IngestLog

SCHEMA, _ = parse_schema(
    {"fields": {"time": "timestamp", "symbol": "string", "price": "double"}, "event_time": "time"},
    "s",
)


def diagram(name: str, inputs: list[str]):
    doc = {
        "version": 1,
        "name": name,
        "inputs": {i: {} for i in inputs},
        "boxes": {
            "merged": {"type": "union", "in": inputs},
            "kept": {"type": "filter", "in": "merged", "where": "price >= 0"},
        },
        "outputs": {f"{name}_out": {"from": "kept"}},
    }
    return validate(doc, {i: SCHEMA for i in inputs})


def append_rates(root: Path) -> dict[str, float]:
    log = IngestLog(root)
    log.create_stream("a", SCHEMA)
    rates = {}
    for threads, batch, total in (
        (1, 1, 2000),
        (8, 1, 8000),
        (8, 100, 400_000),
        (1, 1000, 500_000),
    ):
        per_thread = total // threads // batch
        rows = [{"symbol": "x", "price": 1.0}] * batch

        def send() -> None:
            for _ in range(per_thread):
                log.append("a", rows)

        pool = [threading.Thread(target=send) for _ in range(threads)]
        commits, start = log.commits, time.perf_counter()
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        elapsed = time.perf_counter() - start
        key = f"{threads} threads x batches of {batch}"
        rates[key] = round(per_thread * threads * batch / elapsed)
        rates[key + " (appends per flush)"] = round(
            per_thread * threads / (log.commits - commits), 1
        )
    log.close()
    return rates


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--idle-seconds", type=float, default=30)
    parser.add_argument("--diagrams", type=int, default=10)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="sluice-probe-"))
    report: dict = {"append_tuples_per_second": append_rates(root / "rates")}
    print(json.dumps(report, indent=1), flush=True)

    from server.runtime import Runtime

    start = time.perf_counter()
    rt = Runtime(root / "rt", "local[2]")
    report["spark_cold_start_s"] = round(time.perf_counter() - start, 1)
    for name in ("in1", "in2"):
        rt.create_stream(name, SCHEMA)
    arrived: dict[str, float] = {}
    done = threading.Condition()

    def on_batch(output, table) -> None:
        now = time.perf_counter()
        with done:
            for symbol in table.column("symbol").to_pylist():
                arrived.setdefault(symbol, now)
            done.notify_all()

    start = time.perf_counter()
    rt.deploy("d0", diagram("d0", ["in1", "in2"]), on_batch)
    report["first_deploy_s"] = round(time.perf_counter() - start, 1)
    acked: dict[str, float] = {}
    for i in range(args.samples + 20):
        symbol = f"k{i}"
        rt.append("in1" if i % 2 else "in2", [{"symbol": symbol, "price": 1.0}])
        acked[symbol] = time.perf_counter()
        with done:
            done.wait_for(lambda: symbol in arrived, timeout=60)
        time.sleep(0.05 + (i % 7) * 0.03)  # arrivals at varying phases of the batch cycle
    latencies = sorted(1000 * (arrived[s] - acked[s]) for s in list(acked)[20:] if s in arrived)
    report["latency_ms"] = {
        "samples": len(latencies),
        "p50": round(statistics.median(latencies)),
        "p99": round(latencies[int(0.99 * (len(latencies) - 1))]),
        "max": round(latencies[-1]),
    }
    report["progress"] = rt.status("d0")["outputs"]["d0_out"]
    print(json.dumps(report, indent=1), flush=True)
    for k in range(1, args.diagrams):
        rt.deploy(f"d{k}", diagram(f"d{k}", ["in1", "in2"]), on_batch)
    time.sleep(10)  # let every query reach its idle long-poll
    before, start = tree_cpu_seconds(os.getpid()), time.perf_counter()
    time.sleep(args.idle_seconds)
    report[f"idle_cores_{args.diagrams}_diagrams"] = round(
        (tree_cpu_seconds(os.getpid()) - before) / (time.perf_counter() - start), 3
    )
    print(json.dumps(report, indent=1), flush=True)
    rt.close()


if __name__ == "__main__":
    main()
