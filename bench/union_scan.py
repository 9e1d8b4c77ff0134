"""What a union of N streams of one log costs per micro-batch: Spark's batch time and its
planning and running phases (``batch_phases_ms``) for a union of 1, 3 and 10 streams into a
filter, one tuple on every stream each ``--every`` seconds, in one runtime.

    .venv/bin/python -m bench.union_scan [--streams 1,3,10] [--batches 30]

A probe, not a goal: numbers go to docs/benchmarks.md ("The live edge"); tests never assert
timings.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from bench.runtime_probe import SCHEMA
from boxes.document import validate

PHASES = ("triggerExecution", "queryPlanning", "addBatch", "latestOffset")


def diagram(name: str, inputs: list[str]):
    """A union of ``inputs`` (the one input itself if it is alone) into a filter."""
    boxes: dict = {"kept": {"type": "filter", "in": inputs[0], "where": "price >= 0"}}
    if len(inputs) > 1:
        boxes = {"merged": {"type": "union", "in": inputs}} | boxes
        boxes["kept"]["in"] = "merged"
    doc = {
        "version": 1,
        "name": name,
        "inputs": {i: {} for i in inputs},
        "boxes": boxes,
        "outputs": {f"{name}_out": {"from": "kept"}},
    }
    return validate(doc, {i: SCHEMA for i in inputs})


def probe(rt, count: int, batches: int, every: float) -> dict:
    """p50 of each phase over ``batches`` batches with rows of a union of ``count`` streams."""
    names = [f"u{count}_{k}" for k in range(count)]
    for name in names:
        rt.create_stream(name, SCHEMA)
    diagram_id = f"union{count}"
    rt.deploy(diagram_id, diagram(diagram_id, names), lambda output, table: None)
    seen: dict[int, dict] = {}
    warm = 5  # the first batches plan and compile cold
    while len(seen) < batches + warm:
        for name in names:
            rt.append(name, [{"symbol": name, "price": 1.0}])
        time.sleep(every)  # poll: the next batch's progress
        progress = rt.last_progress(diagram_id)[f"{diagram_id}_out"] or {}
        if progress.get("numInputRows"):
            seen[progress["batchId"]] = progress["durationMs"]
    rt.stop(diagram_id)
    kept = [seen[b] for b in sorted(seen)[warm:]]
    return {p: round(statistics.median(d.get(p, 0) for d in kept)) for p in PHASES}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--streams", default="1,3,10")
    parser.add_argument("--batches", type=int, default=30)
    parser.add_argument("--every", type=float, default=0.3)
    args = parser.parse_args()
    from server.runtime import Runtime

    rt = Runtime(Path(tempfile.mkdtemp(prefix="sluice-union-")) / "rt", "local[2]")
    try:
        for count in (int(c) for c in args.streams.split(",")):
            print(json.dumps({"streams": count, **probe(rt, count, args.batches, args.every)}))
    finally:
        rt.close()


if __name__ == "__main__":
    main()
