"""Properties of the rewriting (seed 002).

Without aggregates: for random read and join policies and random plans (filters, a union or a
join), Spark running the rewritten plan delivers exactly the tuples that post-filtering the
original plan's output by the applicable policies delivers (evaluated in plain Python on each
output tuple and the stream it came from), and a refusal exactly when some stream is left
unauthorized. With aggregates: the rewritten window is never smaller, nor its step shorter,
than an applicable policy allows.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from boxes.compiler import compile_plan
from boxes.document import validate
from boxes.errors import Denied
from boxes.rewrite import Subject, rewrite
from boxes.rewrite.policy import policies_from
from boxes.types import parse_schema
from tests.boxes.conftest import at, collect, frames

SCHEMA = {"fields": {"t": "timestamp", "k": "string", "v": "long"}, "event_time": "t"}
STREAMS = {s: parse_schema(SCHEMA, s)[0] for s in ("A", "B")}
# (predicate over one stream, the same in Python over a row and the subject's attributes)
READS = [
    ("v > self.lo", lambda r, s: r["v"] > s["lo"]),
    ("k = self.key", lambda r, s: r["k"] == s["key"]),
    ("v <> 1 AND k <> 'b'", lambda r, s: r["v"] != 1 and r["k"] != "b"),
    ("v IN (self.vs)", lambda r, s: r["v"] in s["vs"]),
]
JOINS = [
    ("A.v >= B.v", lambda a, b, s: a["v"] >= b["v"]),
    ("A.k = self.key AND B.v > self.lo", lambda a, b, s: a["k"] == s["key"] and b["v"] > s["lo"]),
]
FILTERS = [("v > 0", lambda r: r["v"] > 0), ("k = 'a'", lambda r: r["k"] == "a")]

rows = st.lists(
    st.fixed_dictionaries(
        {"t": st.integers(0, 9).map(at), "k": st.sampled_from("ab"), "v": st.integers(-3, 3)}
    ),
    min_size=1,
    max_size=6,
)
GRANTED = st.sampled_from(["*", "*", ["k", "v"], ["k"]])
read_policies = st.tuples(
    *(
        st.lists(
            st.tuples(st.just(s), st.integers(0, len(READS) - 1), GRANTED),
            min_size=int(s == "A"),
            max_size=2,
        )
        for s in "AB"
    )
).map(lambda lists: lists[0] + lists[1])
join_policies = st.lists(st.tuples(st.integers(0, len(JOINS) - 1), GRANTED), max_size=2)
subjects = st.fixed_dictionaries(
    {
        "lo": st.integers(-3, 3),
        "key": st.sampled_from("ab"),
        "vs": st.lists(st.integers(-3, 3), max_size=3),
    }
)


def document(shape: str, filters: dict[str, int | None], within: str) -> dict[str, Any]:
    boxes: dict[str, Any] = {}
    ends = {}
    for s in ("A", "B"):
        ends[s] = s
        if filters[s] is not None:
            boxes[f"f{s}"] = {"type": "filter", "in": s, "where": FILTERS[filters[s]][0]}
            ends[s] = f"f{s}"
    if shape == "single":
        top = ends["A"]
    elif shape == "union":
        boxes["u"] = {"type": "union", "in": [ends["A"], ends["B"]]}
        top = "u"
    else:
        boxes["j"] = {"type": "join", "left": ends["A"], "right": ends["B"], "on": ["k"],
                      "within": within}  # fmt: skip
        top = "j"
    inputs = ["A"] if shape == "single" else ["A", "B"]
    boxes = {n: b for n, b in boxes.items() if shape != "single" or n != "fB"}
    return {"version": 1, "name": "p", "inputs": {s: {} for s in inputs}, "boxes": boxes,
            "outputs": {"out": {"from": top}}}  # fmt: skip


def policies(reads, joins):
    items = [
        {
            "name": f"r{i}",
            "role": "r",
            "streams": {s: attrs},
            "where": READS[p][0],
            "privilege": "read",
        }  # fmt: skip
        for i, (s, p, attrs) in enumerate(reads)
    ]
    items += [
        {
            "name": f"j{i}",
            "role": "r",
            "streams": {"A": attrs, "B": "*"},
            "where": JOINS[p][0],
            "privilege": "join",
        }  # fmt: skip
        for i, (p, attrs) in enumerate(joins)
    ]
    return policies_from(items)


def post_filter(shape, output, reads, joins, attrs):
    """The original output's tuples the applicable policies authorize, or None: refused."""
    ra = [READS[p][1] for s, p, a in reads if s == "A" and a != ["k"]]
    rb = [READS[p][1] for s, p, a in reads if s == "B" and a != ["k"]]
    js = [JOINS[p][1] for p, a in joins if a != ["k"]] if shape == "join" else []
    needed = ["A"] if shape == "single" else ["A", "B"]
    granted = {"A": bool(ra), "B": bool(rb)}
    if not all(granted[s] for s in needed) and not js:
        return None
    kept = []
    for row, sources in output:
        if shape == "join":
            a = {f: row[f"left_{f}" if f != "k" else f] for f in ("t", "k", "v")}
            b = {f: row[f"right_{f}" if f != "k" else f] for f in ("t", "k", "v")}
            ok = (any(r(a, attrs) for r in ra) and any(r(b, attrs) for r in rb)) or any(
                j(a, b, attrs) for j in js
            )
        else:
            ok = any(r(row, attrs) for r in (ra if sources == ("A",) else rb))
        if ok:
            kept.append((row, sources))
    return kept


def _bag(output):
    return Counter((tuple(sorted(row.items())), sources) for row, sources in output)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    shape=st.sampled_from(["single", "union", "join", "join"]),
    filters=st.fixed_dictionaries(
        {s: st.one_of(st.none(), st.integers(0, len(FILTERS) - 1)) for s in "AB"}
    ),
    within=st.sampled_from(["3s", "10s"]),
    reads=read_policies,
    joins=join_policies,
    attrs=subjects,
    data=st.fixed_dictionaries({"A": rows, "B": rows}),
)
@example(  # both sides read and a join policy: (read AND read) OR join (Algorithm 3)
    shape="join",
    filters={"A": None, "B": None},
    within="10s",
    reads=[("A", 0, "*"), ("B", 1, "*")],
    joins=[(0, "*")],
    attrs={"lo": 0, "key": "a", "vs": []},
    data={
        "A": [{"t": at(1), "k": "a", "v": 1}, {"t": at(2), "k": "b", "v": -1}],
        "B": [{"t": at(3), "k": "a", "v": 2}, {"t": at(4), "k": "b", "v": -2}],
    },
)
def test_rewriting_equals_post_filtering(spark, shape, filters, within, reads, joins, attrs, data):
    doc = document(shape, filters, within)
    plan = validate(doc, streams={s: STREAMS[s] for s in doc["inputs"]})
    subject = Subject(frozenset({"r"}), attrs)
    original = compile_plan(plan, frames(spark, plan, data))["out"]
    output = collect(plan, original)
    expected = post_filter(shape, output, reads, joins, attrs)
    try:
        out = rewrite(doc, plan, policies(reads, joins), subject)
    except Denied:
        event("refused")
        assert expected is None
        return
    event(f"rewritten ({shape}): {len(expected) > 0} tuples, {len(output) > len(expected)} cut")
    assert expected is not None
    rewritten = compile_plan(out.plan, frames(spark, out.plan, data))["out"]
    assert _bag(collect(out.plan, rewritten)) == _bag(expected)


SECONDS = [60, 300, 600, 1800, 3600]


@settings(max_examples=200, deadline=None)
@given(
    size=st.sampled_from(SECONDS),
    slide=st.sampled_from(SECONDS),
    windows=st.lists(
        st.tuples(st.sampled_from([0, *SECONDS]), st.sampled_from([0, *SECONDS])), max_size=3
    ),
    function=st.sampled_from(["count()", "sum(v)", "max(v)"]),
    granted=st.sampled_from([["count"], ["count", "sum", "max"], "aggregate"]),
    read=st.booleans(),
)
def test_aggregate_windows_never_shrink_below_a_policy(
    size, slide, windows, function, granted, read
):
    slide = min(size, slide)
    doc = {
        "version": 1, "name": "w", "inputs": {"A": {}},
        "boxes": {"n": {"type": "aggregate", "in": "A", "group_by": ["k"],
                        "window": {"size": f"{size}s", "slide": f"{slide}s"},
                        "aggregates": {"x": function}}},
        "outputs": {"out": {"from": "n"}},
    }  # fmt: skip
    plan = validate(doc, streams={"A": STREAMS["A"]})
    items = [
        {
            "name": f"a{i}",
            "role": "r",
            "streams": {"A": "*"},
            "where": "v > 0",
            "privilege": granted,
            "window": {"size": f"{w}s", "step": f"{s}s"},
        }  # fmt: skip
        for i, (w, s) in enumerate(windows)
    ]
    if read:
        items.append({"name": "read", "role": "r", "streams": {"A": "*"}, "privilege": "read"})
    applies = [w for w in windows if granted != ["count"] or function == "count()"]
    try:
        out = rewrite(doc, plan, policies_from(items), Subject(frozenset({"r"})))
    except Denied:
        assert not applies and not read
        return
    box = next(b for b in out.plan.boxes if b.name == "n")
    assert (box.size, box.slide) >= (size, slide) and box.slide <= box.size
    for w, s in applies:
        assert box.size >= w and box.slide >= s
    if not applies:
        assert (box.size, box.slide) == (size, slide)


@pytest.mark.parametrize("shape", ["single", "union", "join"])
def test_the_reference_refuses_without_policies(shape):
    """The property's oracle is not vacuous: no policy, no tuples."""
    assert post_filter(shape, [], [], [], {}) is None
