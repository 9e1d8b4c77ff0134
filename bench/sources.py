"""Sources: what a label costs when it must name 2, 64, 200 or 4096 input streams.

Up to 64 sources a label is one 64-bit word; above, a sparse set of bit indexes
(``boxes/labels.py``), whose cost per tuple grows with the sources a tuple derives from, not
with how many there are. The diagram is a union of two inputs whose labels are made as wide
as ``width`` sources would make them (their bits are 0 and ``width - 1``); a real union of
4096 inputs cannot be used, because building its Spark plan alone takes many minutes (see
docs/benchmarks.md). The subscriber may read the two inputs but none of the other
``width - 2`` sources, so the SecFilter must test every label against the whole width.
Label cost per tuple = the median over pairs of (secured - unsecured time) / tuples, compared
across widths; its noise floor is the interquartile range of those per-pair differences.
"""

from __future__ import annotations

import dataclasses
import statistics

import numpy as np

from bench import spark_batch
from bench.harness import Comparison, Mode, compare, timed
from bench.report import Goal, Result, Row
from boxes.input import InputBox
from boxes.labels import is_sparse, mask_words, word_count

NAME = "sources"
WIDTHS = (2, 64, 200, 4096)
GOAL = 2.0  # 4096 sources cost at most twice what 64 do
DOC = {
    "version": 1,
    "name": "sources",
    "inputs": {"a": {}, "b": {}},
    "boxes": {"both": {"type": "union", "in": ["a", "b"]}},
    "outputs": {"out": {"from": "both"}},
}


def widened(width: int):
    """The two-input plan with labels as wide as ``width`` sources, and the mask of a reader
    of just those two."""
    plan = spark_batch.plan_of(DOC)
    words = word_count(width)
    bits = {"a": 0, "b": width - 1}
    boxes = tuple(
        dataclasses.replace(box, bit=bits[box.name], words=words)
        if isinstance(box, InputBox)
        else box
        for box in plan.boxes
    )
    mask = np.array(mask_words(bits.values(), words), dtype=np.int64).view(np.uint64)
    return dataclasses.replace(plan, boxes=boxes, label_words=words), mask


def label_cost(c: Comparison, count: int) -> tuple[float, float]:
    """Label cost in ns per tuple (median of the pairs' differences) and its noise floor (their
    interquartile range): a cost below the floor cannot be told from zero."""
    diffs = [1e9 * (s - u) / count for s, u in zip(c.secured, c.unsecured, strict=False)]
    q1, _, q3 = statistics.quantiles(diffs, n=4, method="inclusive")
    return statistics.median(diffs), q3 - q1


def run(mode: Mode) -> Result:
    spark = spark_batch.session()
    count, reps = mode.tuples(200_000, 1_000_000), mode.pick(5, 9)
    result = Result()
    costs = {}
    for width in WIDTHS:
        plan, mask = widened(width)
        frames = {name: spark_batch.rows(spark, count // 2) for name in plan.inputs}
        variants = spark_batch.Variants(plan, frames, mask)
        c = compare(timed(variants.secured), timed(variants.unsecured), reps, warmup=2)
        costs[width] = label_cost(c, count)
        result.rows.append(
            Row(
                NAME,
                f"{width} sources ({_shape(width)} label)",
                "tuples/s",
                count / c.secured_median,
                count / c.unsecured_median,
                c,
            )
        )
        result.rows.append(
            Row(NAME, f"{width} sources, of which SecFilter", "ms per batch", variants.filter_ms())
        )
    result.goals.append(goal(costs[4096], costs[64]))
    return result


def _shape(width: int) -> str:
    return "sparse" if is_sparse(word_count(width)) else "1-word"


def goal(wide: tuple[float, float], narrow: tuple[float, float]) -> Goal:
    """4096 sources against 64, where the 64-source cost is taken as at least its noise floor
    (a noisy, even negative, difference must not make the ratio meaningless)."""
    (cost, _), (base, floor) = wide, narrow
    growth = cost / max(base, floor)
    return Goal(
        NAME,
        f"label cost at 4096 sources <= {GOAL:g}x that at 64",
        f"{cost:.0f} vs {base:.0f} ns/tuple (noise floor {floor:.0f}): {growth:.1f}x",
        growth <= GOAL,
    )
