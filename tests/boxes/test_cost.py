"""The cost estimate of a diagram (pure: a validated plan in, measures out) and the problems it
reports for measures over their limits."""

from __future__ import annotations

import pytest

from boxes import cost
from boxes.document import validate

SCHEMA = {"fields": {"t": "timestamp", "k": "string", "x": "long"}, "event_time": "t"}


def plan(boxes: dict, lateness: str | None = None, out: str = "a", inputs=("i",)):
    declared = {name: {"schema": "s"} for name in inputs}
    if lateness:
        declared["i"]["lateness"] = lateness
    doc = {
        "version": 1,
        "name": "q",
        "schemas": {"s": SCHEMA},
        "inputs": declared,
        "boxes": boxes,
        "outputs": {"o": {"from": out}},
    }
    return validate(doc)


def aggregate(size: str, slide: str | None = None, source: str = "i") -> dict:
    window = {"size": size} if slide is None else {"size": size, "slide": slide}
    return {"type": "aggregate", "in": source, "window": window, "aggregates": {"n": "count()"}}


def measures(p) -> dict:
    return {(m.parameter, m.box): m.value for m in cost.estimate(p)}


def test_a_tumbling_window_puts_each_tuple_in_one_window():
    assert measures(plan({"a": aggregate("10s")})) == {
        ("windows_per_tuple", "a"): 1,
        ("window_seconds", "a"): 10.0,
        ("open_windows", None): 1,
    }


def test_a_sliding_window_puts_each_tuple_in_size_over_slide_windows_rounded_up():
    got = measures(plan({"a": aggregate("10s", "3s")}))
    assert got[("windows_per_tuple", "a")] == 4  # ceil(10 / 3)
    assert measures(plan({"a": aggregate("1h", "1ms")}))[("windows_per_tuple", "a")] == 3_600_000


def test_lateness_keeps_more_windows_open_and_aggregates_add_up():
    boxes = {"a": aggregate("10s", "5s"), "b": aggregate("1m", source="a")}
    got = measures(plan(boxes, lateness="20s", out="b"))
    # a: ceil((10 + 20) / 5) = 6; b: ceil((60 + 20) / 60) = 2
    assert got[("open_windows", None)] == 8


def test_a_join_is_measured_by_its_bound():
    join = {"type": "join", "left": "i", "right": "j", "on": ["k"], "within": "2m"}
    assert measures(plan({"a": join}, inputs=("i", "j")))[("join_bound_seconds", "a")] == 120.0


def test_a_count_join_keeps_each_sides_rows_and_a_limit_names_the_side_over_it():
    join = {
        "type": "join",
        "left": "i",
        "right": "j",
        "on": ["k"],
        "rows": {"left": 50, "right": 700},
    }
    p = plan({"a": join}, inputs=("i", "j"))
    assert sorted((m.parameter, m.value) for m in cost.estimate(p)) == [
        ("open_windows", 0),
        ("window_rows", 50),
        ("window_rows", 700),
    ]
    (problem,) = cost.over(cost.estimate(p), {"window_rows": 500})
    assert (problem.code, problem.path) == ("COST_LIMIT_EXCEEDED", "boxes.a.rows.right")


@pytest.mark.parametrize("limit, refused", [(3_600_000, False), (3_599_999, True)])
def test_a_measure_at_its_limit_passes_and_one_above_is_a_problem_naming_box_and_limit(
    limit, refused
):
    problems = cost.over(
        cost.estimate(plan({"a": aggregate("1h", "1ms")})), {"windows_per_tuple": limit}
    )
    assert [p.to_dict() for p in problems] == (
        [
            {
                "code": "COST_LIMIT_EXCEEDED",
                "path": "boxes.a.window",
                "message": f"windows_per_tuple is 3600000; the limit is {limit}",
            }
        ]
        if refused
        else []
    )


def test_a_parameter_without_a_limit_is_not_limited():
    assert cost.over(cost.estimate(plan({"a": aggregate("1h", "1ms")})), {}) == []


def test_a_count_window_keeps_its_rows_per_key_and_is_in_rows_over_slide_results():
    box = {
        "type": "aggregate",
        "in": "i",
        "window": {"rows": 1000, "slide": 30},
        "group_by": ["k"],
        "aggregates": {"n": "count()"},
    }
    p = plan({"a": box})
    assert measures(p) == {
        ("windows_per_tuple", "a"): 34,  # ceil(1000 / 30)
        ("window_rows", "a"): 1000,
        ("open_windows", None): 1,
    }
    (problem,) = cost.over(cost.estimate(p), {"window_rows": 500})
    assert (problem.code, problem.path) == ("COST_LIMIT_EXCEEDED", "boxes.a.window.rows")


def test_role_limits_add_up_across_roles_and_a_role_without_one_leaves_it_to_the_ceilings():
    from boxes.cost import Limit, effective

    limits = {"A": {"window_seconds": 60, "open_windows": 5}, "B": {"window_seconds": 600}}
    assert effective(limits, ["A", "B"]) == {"window_seconds": Limit(600, "B")}
    assert effective(limits, ["A"]) == {
        "window_seconds": Limit(60, "A"),
        "open_windows": Limit(5, "A"),
    }
    assert effective(limits, []) == {}


def test_cost_of_names_the_operator_types_and_the_excesses_name_box_and_role():
    from boxes.cost import Limit, cost_of, excesses
    from boxes.document import validate

    doc = {
        "version": 1,
        "name": "q",
        "schemas": {"s": {"fields": {"t": "timestamp"}, "event_time": "t"}},
        "inputs": {"i": {"schema": "s"}},
        "boxes": {
            "a": {
                "type": "aggregate",
                "in": "i",
                "window": {"size": "1h", "slide": "1ms"},
                "aggregates": {"n": "count()"},
            },
        },
        "outputs": {"o": {"from": "a"}},
    }
    cost = cost_of(validate(doc))
    assert cost.box_types == ("aggregate",)
    (excess,) = excesses(cost, {"windows_per_tuple": Limit(100, "CUSTOMER1")})
    assert str(excess) == "box a: windows_per_tuple is 3600000; the limit of role CUSTOMER1 is 100"
