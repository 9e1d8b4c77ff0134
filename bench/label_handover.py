"""What handing a label over costs, and what a narrower one would save: one batch through the
tuple path's chain of 64 boxes (bench/tuple_path.py), as the runtime's sink runs it
(``coalesce``, ``toArrow``), with no label column, with the label as Sluice carries it (a
``bigint`` up to 64 sources), with the same label cast to ``tinyint``, the narrowest column
there is, and as the runtime hands it over (``server/runtime/handover.py``: narrowed and
checked in the query, widened back). Interleaved pairs (bench/harness.py); each ratio is over
no label, with its interquartile range. No SecFilter runs: this is the hand-over alone.

    .venv/bin/python -m bench.label_handover [--rows 2000000] [--reps 15]

A probe, not a goal: it says why the 64-box goal in docs/benchmarks.md is missed (a label
column of any width costs a share of a narrow tuple's hand-over); tests never assert timings.
"""

from __future__ import annotations

import argparse
import json

from bench import spark_batch, tuple_path
from bench.harness import compare, timed
from boxes.compiler import compile_plan
from boxes.labels import LABEL_COLUMN
from server.runtime.handover import narrowed, to_arrow

WARMUP = 5


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    spark = spark_batch.session()
    data = spark_batch.rows(spark, args.rows).cache()
    data.count()
    plan = spark_batch.plan_of(tuple_path.chain(64))
    (labelled,) = compile_plan(plan, {"data": data, "idle": spark_batch.rows(spark, 0)}).values()
    bare = labelled.drop(LABEL_COLUMN)

    def bare_arrow():
        return bare.coalesce(spark_batch.CORES).toArrow()

    narrow = labelled.withColumn(LABEL_COLUMN, labelled[LABEL_COLUMN].cast("tinyint"))
    checked = narrowed(labelled, len(plan.label_sources))
    ways = {
        "bigint": lambda: labelled.coalesce(spark_batch.CORES).toArrow(),
        "tinyint": lambda: narrow.coalesce(spark_batch.CORES).toArrow(),
        "handover": lambda: to_arrow(checked, spark_batch.CORES),  # checked, widened: the sink's
    }
    for way in [*ways.values(), bare_arrow] * WARMUP:  # the JIT warms on all of them first
        way()
    for name, way in [*ways.items()] * 2:  # then each twice against no label
        run = compare(timed(way), timed(bare_arrow), args.reps, warmup=2)
        summary = run.summary("labelled", "bare")
        print(json.dumps({"label": name, "rows": args.rows, **summary}))


if __name__ == "__main__":
    main()
