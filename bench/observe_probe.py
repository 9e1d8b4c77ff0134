"""What counting rows per box costs (boxes/observed.py): one batch through a chain of filters,
compiled with each box observed (as the runtime runs it) and without, as the runtime's sink
runs it (``coalesce``, ``toArrow``). Interleaved pairs (bench/harness.py); the ratio is
observed / not observed, with its interquartile range.

    .venv/bin/python -m bench.observe_probe [--rows 200000] [--reps 9]

A probe, not a goal: numbers go to docs/editor.md; tests never assert timings.
"""

from __future__ import annotations

import argparse
import json

from bench import spark_batch
from bench.harness import compare, timed
from boxes.compiler import compile_plan


def chain(boxes: int) -> dict:
    """One input, then ``boxes`` filters that keep every tuple."""
    steps, previous = {}, "in1"
    for k in range(boxes):
        steps[f"f{k}"] = {"type": "filter", "in": previous, "where": f"price >= -{k + 1}"}
        previous = f"f{k}"
    return {
        "version": 1,
        "name": f"chain{boxes}",
        "inputs": {"in1": {}},
        "boxes": steps,
        "outputs": {"out": {"from": previous}},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--reps", type=int, default=9)
    args = parser.parse_args()
    spark = spark_batch.session()
    data = spark_batch.rows(spark, args.rows).cache()
    data.count()
    for boxes in (4, 16):
        plan = spark_batch.plan_of(chain(boxes))
        (counted,) = compile_plan(plan, {"in1": data}, observe=True).values()
        (plain,) = compile_plan(plan, {"in1": data}).values()
        run = compare(
            timed(lambda f=counted: f.coalesce(spark_batch.CORES).toArrow()),
            timed(lambda f=plain: f.coalesce(spark_batch.CORES).toArrow()),
            args.reps,
        )
        summary = run.summary("observed", "plain")
        print(json.dumps({"boxes": boxes, "rows": args.rows, **summary}))


if __name__ == "__main__":
    main()
