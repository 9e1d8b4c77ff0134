"""The cost estimator: a pure function of a validated plan, no Spark."""

from __future__ import annotations

import math

import pytest

from boxes.cost import DEFAULT_CEILINGS, Limit, effective, estimate, excesses
from boxes.document import validate

SCHEMA = {"fields": {"t": "timestamp", "k": "string", "b": "boolean"}, "event_time": "t"}


def plan(inputs=("i",), **boxes):
    last = list(boxes)[-1]
    return validate(
        {
            "version": 1,
            "name": "q",
            "schemas": {"s": SCHEMA},
            "inputs": {name: {"schema": "s"} for name in inputs},
            "boxes": boxes,
            "outputs": {"o": {"from": last}},
        }
    )


def agg(size, slide=None, group_by=()):
    window = {"size": size, **({"slide": slide} if slide else {})}
    return {
        "type": "aggregate",
        "in": "i",
        "window": window,
        "group_by": list(group_by),
        "aggregates": {"n": "count()"},
    }


def measures(p):
    return {(m.parameter, m.box): m.value for m in estimate(p).measures}


def test_the_attack_is_3_6_million_windows_per_tuple_and_over_the_default_ceilings():
    cost = estimate(plan(a=agg("1h", "1ms")))
    assert measures(plan(a=agg("1h", "1ms")))[("windows_per_tuple", "a")] == 3_600_000
    over = excesses(cost, effective({}, ["R"], DEFAULT_CEILINGS))
    assert {e.measure.parameter for e in over} == {
        "windows_per_tuple",
        "window_slide",
        "state_windows",
    }
    assert "windows_per_tuple is 3600000; the system limit is at most 1000" in str(over[0])


@pytest.mark.parametrize(
    ("size", "slide", "windows"),
    [("10s", None, 1), ("10s", "5s", 2), ("10s", "3s", 4), ("1m", "1s", 60)],
)
def test_windows_per_tuple_is_size_over_slide_rounded_up(size, slide, windows):
    assert measures(plan(a=agg(size, slide)))[("windows_per_tuple", "a")] == windows


def test_group_cardinality_is_known_only_for_booleans():
    assert measures(plan(a=agg("10s")))[("group_cardinality", "a")] == 1
    assert measures(plan(a=agg("10s", group_by=["b"])))[("group_cardinality", "a")] == 2
    assert math.isinf(measures(plan(a=agg("10s", group_by=["k", "b"])))[("group_cardinality", "a")])


def test_state_sums_the_aggregates_and_joins_measure_their_bound():
    p = plan(
        ("i", "j"),
        a=agg("10s", "5s"),
        b={**agg("1m", "10s"), "in": "j"},
        jn={"type": "join", "left": "a", "right": "b", "on": ["n"], "within": "30s"},
    )
    m = measures(p)
    assert m[("state_windows", None)] == 2 + 6
    assert m[("join_bound", "jn")] == 30
    assert estimate(p).box_types == ("aggregate", "join")


def test_a_filter_costs_nothing_but_its_type():
    cost = estimate(plan(f={"type": "filter", "in": "i", "where": "b"}))
    assert cost.box_types == ("filter",)
    assert excesses(cost, effective({}, ["R"], DEFAULT_CEILINGS)) == []


def test_roles_add_up_and_the_ceiling_caps_them():
    ceiling = {"window_size": 3600, "window_slide": 1}
    limits = {
        "A": {"window_size": 60, "window_slide": 10},
        "B": {"window_size": 7200, "window_slide": 5},
    }
    assert effective(limits, ["A", "B"], ceiling) == {
        "window_size": Limit(3600, "system"),
        "window_slide": Limit(5, "role B"),
    }
    assert effective(limits, ["A"], ceiling)["window_size"] == Limit(60, "role A")
    assert effective({"A": {"group_cardinality": 10}}, ["A"], {}) == {
        "group_cardinality": Limit(10, "role A")
    }
    assert effective({"A": {"group_cardinality": 10}}, ["A", "C"], {}) == {}


def test_an_unknown_cardinality_is_over_any_limit_on_it():
    cost = estimate(plan(a=agg("10s", group_by=["k"])))
    (over,) = excesses(cost, {"group_cardinality": Limit(100, "role A")})
    assert over.to_dict() == {
        "parameter": "group_cardinality",
        "value": None,
        "limit": 100,
        "set_by": "role A",
        "box": "a",
    }
