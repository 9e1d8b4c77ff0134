"""Levels through random diagrams on real Spark (batch), with hypothesis: random tuples of random
levels, a random diagram shape (filter, union, windowed aggregate, join, and chains of them) at
a random level. Every result's level must be the LUB (the OR of the company bits) of exactly the
tuples that made it, be dominated by the diagram's level, and the delivery check
(``secfilter.cleared``) must pass exactly the results a random subscriber's clearance dominates.

The reference knows which tuples made a result without tracking Spark: each input tuple carries
``v = 2**i``, so a filtered or joined row names its tuple(s) and an aggregate's ``sum(v)`` is the
set of tuples in its group and window.
"""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from boxes.compiler import compile_plan
from boxes.labels import LABEL_COLUMN
from boxes.levels import BOTTOM, LEVEL_COLUMN, TOP
from boxes.secfilter import cleared
from tests.boxes.test_levels_compile import LATTICE, inputs, plan_of

A, B, X, Y = (LATTICE.company_mask(c) for c in "ABXY")
WINDOW, BOUND = 10, 5  # seconds: the aggregate's tumbling window, the join's bound
SHAPES = {
    "filter": (  # b feeds another output, so that the diagram reads both inputs
        "boxes:\n  f: {type: filter, in: a, where: \"k = 'x'\"}\n"
        "outputs: {o: {from: f}, p: {from: b}}\n"
    ),
    "union_filter": (
        "boxes:\n  u: {type: union, in: [a, b]}\n"
        "  f: {type: filter, in: u, where: \"k = 'x'\"}\noutputs: {o: {from: f}}\n"
    ),
    "union_aggregate": (
        "boxes:\n  u: {type: union, in: [a, b]}\n"
        f"  s: {{type: aggregate, in: u, window: {{size: {WINDOW}s}}, group_by: [k],\n"
        "      aggregates: {total: sum(v), n: count()}}\noutputs: {o: {from: s}}\n"
    ),
    "join": (
        f"boxes:\n  j: {{type: join, left: a, right: b, on: [k], within: {BOUND}s}}\n"
        "outputs: {o: {from: j}}\n"
    ),
    "filter_join_aggregate": (
        'boxes:\n  f: {type: filter, in: a, where: "v > 1"}\n'
        f"  j: {{type: join, left: f, right: b, on: [k], within: {BOUND}s}}\n"
        f"  s: {{type: aggregate, in: j, window: {{size: {WINDOW}s}}, group_by: [k],\n"
        "      aggregates: {total: sum(left_v + right_v), n: count()}}\n"
        "outputs: {o: {from: s}}\n"
    ),
}
TUPLE_LEVELS = [0, A, B, X, Y, A | X, B | Y]


def covered(level: int, clearance: int) -> bool:
    return level & ~clearance == 0


def reference(shape: str, rows: dict, clearance: int) -> dict:
    """Each result the diagram must give, as (its contributors' v bits) -> their LUB."""
    seen = {name: [r for r in rs if covered(r[3], clearance)] for name, rs in rows.items()}
    a, b = seen["a"], seen["b"]
    if shape == "filter":
        return {r[2]: r[3] for r in a if r[1] == "x"}
    if shape == "union_filter":
        return {r[2]: r[3] for r in a + b if r[1] == "x"}
    pairs = [
        (left, right)
        for left in a
        if shape == "join" or left[2] > 1
        for right in b
        if left[1] == right[1] and abs(left[0] - right[0]) <= BOUND
    ]
    if shape == "join":
        return {lt[2] | rt[2]: lt[3] | rt[3] for lt, rt in pairs}
    members = (
        [(r[0], r[1], r[2], r[3]) for r in a + b]
        if shape == "union_aggregate"
        else [(lt[0], lt[1], lt[2] | rt[2], lt[3] | rt[3]) for lt, rt in pairs]
    )
    # a group's total is the sum of its members' v: a tuple of b that joins two of a counts
    # twice, as ``sum(left_v + right_v)`` counts it (an OR would not)
    groups: dict[tuple, tuple[int, int]] = {}
    for t, k, v, level in members:
        total, lub = groups.get((t // WINDOW, k), (0, 0))
        groups[(t // WINDOW, k)] = (total + v, lub | level)
    return dict(groups.values())


def contributors(shape: str, row: dict) -> int:
    if shape in ("filter", "union_filter"):
        return row["v"]
    if shape == "join":
        return row["left_v"] | row["right_v"]
    return row["total"]


def tuples(first_bit: int):
    return st.lists(
        st.tuples(st.integers(0, 25), st.sampled_from("xy"), st.sampled_from(TUPLE_LEVELS)),
        max_size=6,
    ).map(lambda ts: [(t, k, 1 << (first_bit + i), lvl) for i, (t, k, lvl) in enumerate(ts)])


def levels():
    return st.tuples(st.sampled_from([BOTTOM, "A", "B", TOP]), st.sampled_from([BOTTOM, "X", TOP]))


@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.sampled_from(sorted(SHAPES)), tuples(0), tuples(8), levels(), levels())
@example(  # one tuple of b joining two of a: the aggregate's sum counts it twice
    "filter_join_aggregate",
    [(0, "x", 1, 0), (0, "x", 2, 0), (0, "x", 4, 0)],
    [(0, "x", 256, 0)],
    (BOTTOM, BOTTOM),
    (BOTTOM, BOTTOM),
)
def test_every_result_carries_the_lub_of_its_contributors_and_delivery_checks_it(
    spark, shape, a, b, level, subscriber
):
    clearance = LATTICE.clearance(level)
    text = "{" + ", ".join(f"{c}: {v}" for c, v in zip(("banks", "oil"), level, strict=True)) + "}"
    plan = plan_of(SHAPES[shape], text, clearance)
    rows = {"a": a, "b": b}
    table = compile_plan(plan, inputs(spark, plan, rows))["o"].toArrow()
    got = table.drop_columns([LABEL_COLUMN]).to_pylist()
    results = {contributors(shape, row): row[LEVEL_COLUMN] for row in got}
    assert len(results) == len(got)  # no result twice
    assert results == reference(shape, rows, clearance)
    assert all(covered(lvl, clearance) for lvl in results.values())
    mask = LATTICE.clearance(subscriber)
    passed = set(cleared(table, mask).tolist())
    assert passed == {i for i, row in enumerate(got) if covered(row[LEVEL_COLUMN], mask)}
