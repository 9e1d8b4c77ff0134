"""Sources: what a label costs when it must name 2, 64, 200 or 4096 input streams.

The label is one 64-bit word per 64 sources, so its width, not the number of branches, is
what the label machinery pays for per tuple. The diagram is a union of two inputs whose
labels are made as wide as ``width`` sources would make them (their bits are 0 and
``width - 1``); a real union of 4096 inputs cannot be used, because building its Spark
plan alone takes many minutes (see docs/benchmarks.md). Label cost per tuple = (secured -
unsecured time) / tuples, compared across widths.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from bench import spark_batch
from bench.harness import compare, timed
from bench.report import Goal, Result, Row
from boxes.input import InputBox
from boxes.labels import mask_words, word_count

NAME = "sources"
WIDTHS = (2, 64, 200, 4096)
GOAL = 2.0   # 4096 sources cost at most twice what 64 do
DOC = {"version": 1, "name": "sources", "inputs": {"a": {}, "b": {}},
       "boxes": {"both": {"type": "union", "in": ["a", "b"]}},
       "outputs": {"out": {"from": "both"}}}


def widened(width: int):
    """The two-input plan with labels as wide as ``width`` sources, and an all-reading mask."""
    plan = spark_batch.plan_of(DOC)
    words = word_count(width)
    bits = {"a": 0, "b": width - 1}
    boxes = tuple(dataclasses.replace(box, bit=bits[box.name], words=words)
                  if isinstance(box, InputBox) else box for box in plan.boxes)
    mask = np.array(mask_words(range(width), words), dtype=np.int64).view(np.uint64)
    return dataclasses.replace(plan, boxes=boxes, label_words=words), mask


def run(quick: bool) -> Result:
    spark = spark_batch.session()
    count, reps = (200_000, 5) if quick else (1_000_000, 9)
    result = Result()
    label_ns = {}
    for width in WIDTHS:
        plan, mask = widened(width)
        frames = {name: spark_batch.rows(spark, count // 2) for name in plan.inputs}
        variants = spark_batch.Variants(plan, frames, mask)
        c = compare(timed(variants.secured), timed(variants.unsecured), reps, warmup=2)
        label_ns[width] = 1e9 * (c.secured_median - c.unsecured_median) / count
        result.rows.append(Row(NAME, f"{width} sources ({word_count(width)}-word label)",
                               "tuples/s", count / c.secured_median, count / c.unsecured_median,
                               c))
        result.rows.append(Row(NAME, f"{width} sources, of which SecFilter", "ms per batch",
                               variants.filter_ms()))
    growth = label_ns[4096] / label_ns[64] if label_ns[64] > 0 else float("inf")
    result.goals.append(Goal(NAME, f"label cost at 4096 sources <= {GOAL:g}x that at 64",
                             f"{label_ns[4096]:.0f} vs {label_ns[64]:.0f} ns/tuple "
                             f"({growth:.1f}x)", growth <= GOAL))
    return result
