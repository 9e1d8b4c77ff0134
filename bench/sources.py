"""Sources: what a label costs when it must name 2, 64, 200 or 4096 input streams.

Up to 64 sources a label is one 64-bit word; above, a sparse set of bit indexes
(``boxes/labels.py``), whose cost per tuple grows with the sources a tuple derives from, not
with how many there are. The diagram is a union of two streams ``a`` and ``b`` numbered as in
a plan whose label bits stand for ``width`` sources: the two streams and, sorted between them,
``width - 2`` more that a derived input would bring (``Plan.sources``), so their bits are 0 and
``width - 1``. A real union of 4096 inputs cannot be used, because building its Spark plan
alone takes many minutes (see docs/benchmarks.md). The labels are thus ones such a plan
produces, handed over as the runtime hands over that plan's (``server/runtime/handover.py``
narrows a word only up to 31 sources). The subscriber may read the two streams but none of
the other ``width - 2`` sources, so the SecFilter must test every label against the whole width.
Label cost per tuple = the median over pairs of (secured - unsecured time) / tuples, compared
across widths; its noise floor is the interquartile range of those per-pair differences.
"""

from __future__ import annotations

import dataclasses
import statistics

from bench import spark_batch
from bench.harness import Comparison, Mode, compare, timed
from bench.report import Goal, Result, Row
from boxes.input import InputBox
from boxes.labels import is_sparse, word_count
from boxes.secfilter import readable_mask

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
    """The two-input plan with its label bits numbered over ``width`` sorted sources (``a``
    first, ``b`` last), and the mask of a reader of just those two."""
    plan = spark_batch.plan_of(DOC)
    sources = ("a", *(f"a{i:04d}" for i in range(1, width - 1)), "b")  # a < a0001 < ... < b
    words = word_count(width)
    boxes = tuple(
        dataclasses.replace(box, bit=sources.index(box.name), words=words)
        if isinstance(box, InputBox)
        else box
        for box in plan.boxes
    )
    mask = readable_mask(sources, plan.inputs)
    return dataclasses.replace(plan, boxes=boxes, label_words=words, sources=sources), mask


def label_cost(c: Comparison, count: int) -> tuple[float, float]:
    """Label cost in ns per tuple (median of the pairs' differences) and its noise floor (their
    interquartile range): a cost below the floor cannot be told from zero."""
    diffs = [1e9 * (s - u) / count for s, u in zip(c.secured, c.unsecured, strict=False)]
    q1, _, q3 = statistics.quantiles(diffs, n=4, method="inclusive")
    return statistics.median(diffs), q3 - q1


def run(mode: Mode) -> Result:
    spark = spark_batch.session()
    count, reps = mode.tuples(200_000, 1_000_000, least=1_000), mode.pick(5, 9, least=2)
    result = Result()
    costs = {}
    for width in WIDTHS:
        plan, mask = widened(width)
        frames = {name: spark_batch.rows(spark, count // 2) for name in plan.inputs}
        variants = spark_batch.Variants(plan, frames, mask)
        c = compare(timed(variants.secured), timed(variants.unsecured), reps, mode.warmup(2))
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
