"""Tuple path (the paper's Figures 13-15): chains of 4 to 64 filter and union boxes.

Every even box is a filter that keeps every tuple (``price >= -k``, not foldable), every odd
box a union of the chain with a second input that stays empty (a union needs two inputs; the
data all flow down the one chain). Throughput is a large batch's tuples per second, latency
the time a 100-tuple batch takes end to end through plan, Arrow hand-over and SecFilter,
which is a tuple's latency in a micro-batch engine minus trigger and ingestion.
"""

from __future__ import annotations

from bench import spark_batch
from bench.harness import Mode, compare, timed
from bench.report import Goal, Result, Row, percent

NAME = "tuple path"
SIZES = (4, 8, 16, 32, 64)
LATENCY_ROWS = 100
GOALS = {4: 1.05, 64: 1.01}


def chain(boxes: int) -> dict:
    doc = {
        "version": 1,
        "name": f"chain{boxes}",
        "inputs": {"data": {}, "idle": {}},
        "boxes": {},
        "outputs": {"out": {"from": f"b{boxes - 1}"}},
    }
    previous = "data"
    for k in range(boxes):
        doc["boxes"][f"b{k}"] = (
            {"type": "filter", "in": previous, "where": f"price >= -{k + 1}"}
            if k % 2 == 0
            else {"type": "union", "in": [previous, "idle"]}
        )
        previous = f"b{k}"
    return doc


def run(mode: Mode) -> Result:
    spark = spark_batch.session()
    count, reps = mode.tuples(200_000, 1_000_000, least=1_000), mode.pick(7, 9, least=1)
    both = (("throughput", count), ("latency", LATENCY_ROWS))
    kinds = mode.pick(both, both, least=both[1:])  # least: one batch through each chain
    result = Result()
    for boxes in mode.pick(SIZES, SIZES, least=tuple(GOALS)):  # least: the chains with goals
        plan = spark_batch.plan_of(chain(boxes))
        idle = spark_batch.rows(spark, 0)
        for kind, rows in kinds:
            variants = spark_batch.Variants(
                plan, {"data": spark_batch.rows(spark, rows), "idle": idle}
            )
            c = compare(timed(variants.secured), timed(variants.unsecured), reps, mode.warmup(2))
            case = f"{boxes} boxes, {kind}"
            if kind == "throughput":
                row = Row(
                    NAME, case, "tuples/s", rows / c.secured_median, rows / c.unsecured_median, c
                )
            else:
                row = Row(
                    NAME,
                    case,
                    f"ms per batch of {rows}",
                    1e3 * c.secured_median,
                    1e3 * c.unsecured_median,
                    c,
                )
            result.rows += [
                row,
                Row(NAME, f"{case}, of which SecFilter", "ms per batch", variants.filter_ms()),
            ]
            if boxes in GOALS:
                result.goals.append(
                    Goal(
                        NAME,
                        f"{case}: overhead <= {percent(GOALS[boxes])}",
                        row.overhead(),
                        c.ratio <= GOALS[boxes],
                    )
                )
    return result
