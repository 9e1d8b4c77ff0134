"""Rewrite time vs plan size and number of policies (seed 002, Experiments 2 and 3).

Per plan (the paper's Q10/Q20/Q30/Q60 sizes: 3, 6, 9 and 18 inputs, each filtered and
projected, joined in a chain, counted at the end) and per number of policies (10-60: one read
on every input first, so rewriting succeeds, then random reads, joins and aggregates in the
paper's proportions), the time of ``rewrite``, which includes checking the rewritten document
into a plan. Secured = what a deploy checks with rewriting (validate the query, then rewrite
it); unsecured = validating the query alone, which every deploy pays; interleaved pairs
(``bench.harness.compare``) of CPU time (this thread's: the work is single-threaded Python, and
on a shared machine the wall clock mostly measures waiting for a core), and for Q60 with 60
policies the wall clock too. For Q60 with 60 policies, the share of deploy time: validation,
rewriting and Spark's analysis of the rewritten plan (``compile_plan``); starting the query
is left out, as in the query-setup experiment, so the share is not flattered.

``python -m bench --only rewrite`` runs it in the table; ``python -m bench.rewrite_time``
prints the same table alone.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable

from bench import report, spark_batch
from bench.harness import Comparison, Mode, Work, compare, repeat, timed
from bench.report import Goal, Result, Row
from boxes.compiler import compile_plan
from boxes.document import validate
from boxes.rewrite import Subject, rewrite
from boxes.rewrite.policy import policies_from
from boxes.types import parse_schema

SCHEMA = parse_schema({"fields": {"t": "timestamp", "k": "string", "v": "long"},
                       "event_time": "t"}, "s")[0]  # fmt: skip
SIZES = {"Q10": 3, "Q20": 6, "Q30": 9, "Q60": 18}
NAME = "rewrite time (002 Exp. 2-3)"
GOAL_MS, GOAL_SHARE = 5.0, 0.01


def query(n: int) -> dict:
    boxes: dict = {}
    for i in range(n):
        boxes[f"f{i}"] = {"type": "filter", "in": f"s{i}", "where": "v > 0"}
        boxes[f"p{i}"] = {"type": "map", "in": f"f{i}", "fields": {"t": "t", "k": "k", "v": "v"}}
    last = "p0"
    for i in range(1, n):
        boxes[f"j{i}"] = {"type": "join", "left": last, "right": f"p{i}", "on": ["k"],
                          "within": "10s"}  # fmt: skip
        fields = {"t": "left_t", "k": "k", "v": "left_v + right_v"}
        boxes[f"m{i}"] = {"type": "map", "in": f"j{i}", "fields": fields}
        last = f"m{i}"
    boxes["n"] = {"type": "aggregate", "in": last, "window": {"size": "1m"},
                  "aggregates": {"c": "count()"}}  # fmt: skip
    return {"version": 1, "name": "q", "inputs": {f"s{i}": {} for i in range(n)},
            "boxes": boxes, "outputs": {"out": {"from": "n"}}}  # fmt: skip


def policies(n_inputs: int, count: int, rng: random.Random) -> list:
    streams = [f"s{i}" for i in range(n_inputs)]
    items = [{"name": f"base{s}", "role": "r", "streams": {s: "*"}, "where": "v > self.lo",
              "privilege": "read"} for s in streams]  # fmt: skip
    while len(items) < count:
        kind = rng.choices(["read", "join", "count"], [36, 10, 5])[0]
        name = f"p{len(items)}"
        if kind == "join":
            a, b = rng.sample(streams, 2)
            items.append({"name": name, "role": "r", "streams": {a: "*", b: "*"},
                          "where": f"{a}.v < {b}.v", "privilege": "join"})  # fmt: skip
        else:
            items.append({"name": name, "role": "r", "streams": {rng.choice(streams): "*"},
                          "where": "k = self.key", "privilege": kind})  # fmt: skip
    return policies_from(items[:count])


def case(n_inputs: int, count: int):
    """(document, its plan, the policies, the subject) of one case."""
    doc = query(n_inputs)
    plan = validate(doc, streams={f"s{i}": SCHEMA for i in range(n_inputs)})
    chosen = policies(n_inputs, max(count, n_inputs), random.Random(count))
    return doc, plan, chosen, Subject(frozenset({"r"}), {"lo": 0, "key": "a"})


def run(mode: Mode) -> Result:
    reps = mode.pick(31, 101, least=1)
    result = Result()
    for name, n in SIZES.items():
        boxes = len(query(n)["boxes"]) + n + 1
        for count in (10, 30, 60):
            checked, rewritten = variants(n, count)
            c = compare(cpu(rewritten), cpu(checked), reps, mode.warmup(3))
            ms, lo, hi = alone(c)
            label = f"{name} ({boxes} boxes), {max(count, n)} policies"
            result.rows += [
                Row(
                    NAME,
                    f"{label}: validate + rewrite",
                    "ms CPU",
                    1e3 * c.secured_median,
                    1e3 * c.unsecured_median,
                    c,
                ),
                Row(NAME, f"{label}: rewrite alone [IQR {lo:.2f}-{hi:.2f}]", "ms CPU", ms),
            ]
    # ms, lo, hi: the loop's last case, Q60 with 60 policies; now its wall clock too
    checked, rewritten = variants(SIZES["Q60"], 60)
    wall = compare(timed(rewritten), timed(checked), reps, mode.warmup(3))
    wall_ms, wall_lo, wall_hi = alone(wall)
    result.rows.append(
        Row(
            NAME,
            f"Q60, 60 policies: rewrite alone [IQR {wall_lo:.2f}-{wall_hi:.2f}]",
            "ms wall",
            wall_ms,
        )
    )
    result.goals.append(
        Goal(
            NAME,
            f"Q60, 60 policies: rewrite < {GOAL_MS:g} ms",
            f"{ms:.2f} ms CPU [IQR {lo:.2f}, {hi:.2f}]; wall clock {wall_ms:.2f} ms",
            ms < GOAL_MS,
        )
    )
    spark = spark_batch.session()
    doc, plan, chosen, subject = case(SIZES["Q60"], 60)
    out = rewrite(doc, plan, chosen, subject)
    empty = spark.createDataFrame([], SCHEMA.spark_type())
    frames = {name: empty for name in out.plan.inputs}
    spark_ms = 1e3 * statistics.median(
        repeat(
            timed(lambda: compile_plan(out.plan, frames)),
            mode.pick(3, 7, least=1),
            mode.warmup(1),
        )
    )
    deploy = 1e3 * wall.secured_median + spark_ms
    result.rows.append(
        Row(NAME, "Q60, 60 policies: deploy (validate, rewrite, compile_plan)", "ms wall", deploy)
    )
    share = wall_ms / deploy
    result.goals.append(
        Goal(
            NAME,
            f"Q60, 60 policies: rewrite < {GOAL_SHARE:.0%} of deploy",
            f"{share:.2%} of {deploy:,.0f} ms (wall clock)",
            share < GOAL_SHARE,
        )
    )
    result.extra["compile_plan_ms"] = spark_ms
    return result


def variants(n_inputs: int, count: int) -> tuple[Callable[[], None], Callable[[], None]]:
    """What a deploy checks without rewriting (validate the query) and with (then rewrite)."""
    doc, plan, chosen, subject = case(n_inputs, count)
    streams = plan.input_schemas

    def checked() -> None:
        validate(doc, streams=streams)

    def rewritten() -> None:
        rewrite(doc, validate(doc, streams=streams), chosen, subject)

    return checked, rewritten


def cpu(work: Callable[[], object]) -> Work:
    """The CPU seconds ``work`` takes in this thread: rewriting is single-threaded Python, and
    on a shared machine (load 10 on 2 cores) the wall clock mostly measures waiting for a core."""

    def run() -> float:
        start = time.thread_time()
        work()
        return time.thread_time() - start

    return run


def alone(c: Comparison) -> tuple[float, float, float]:
    """The rewrite's own milliseconds, (with) - (without) per pair: median and quartiles."""
    extra = [s - u for s, u in zip(c.secured, c.unsecured, strict=True)]
    lo, hi = _quartiles(extra)
    return 1e3 * statistics.median(extra), 1e3 * lo, 1e3 * hi


def _quartiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    if len(ordered) < 4:
        return ordered[0], ordered[-1]
    q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    return q1, q3


def main() -> None:
    result = run(Mode(quick="--full" not in sys.argv))
    print(report.table(result.rows, result.goals))


if __name__ == "__main__":
    main()
