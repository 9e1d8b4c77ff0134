"""What handing a label over costs, and what a narrower one would save: one batch through the
tuple path's chain of 64 boxes (bench/tuple_path.py), as the runtime's sink runs it
(``coalesce``, ``toArrow``), with no label column, with the label as Sluice carries it (a
``bigint`` up to 64 sources) and with the same label cast to ``tinyint``, the narrowest column
there is. Interleaved pairs (bench/harness.py); each ratio is over no label, with its
interquartile range. No SecFilter runs: this is the hand-over alone.

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
    narrow = labelled.withColumn(LABEL_COLUMN, labelled[LABEL_COLUMN].cast("tinyint"))
    for frame in (bare, labelled, narrow) * WARMUP:  # the JIT warms on all three first
        frame.coalesce(spark_batch.CORES).toArrow()
    for name, frame in (("bigint", labelled), ("tinyint", narrow)) * 2:  # then both twice
        run = compare(
            timed(lambda f=frame: f.coalesce(spark_batch.CORES).toArrow()),
            timed(lambda: bare.coalesce(spark_batch.CORES).toArrow()),
            args.reps,
            warmup=2,
        )
        low, high = run.spread
        print(
            json.dumps(
                {
                    "label": name,
                    "rows": args.rows,
                    "labelled_ms": round(run.secured_median * 1e3, 1),
                    "bare_ms": round(run.unsecured_median * 1e3, 1),
                    "ratio": round(run.ratio, 3),
                    "iqr": [round(low, 3), round(high, 3)],
                }
            )
        )


if __name__ == "__main__":
    main()
