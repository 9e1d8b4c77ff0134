"""Rows through each box (boxes/observed.py): which query's counts stand for a box, rows in
from rows out, and the sources a box's counts are about. Spark's side (each box observed in
a running query) is tested with the server: tests/server/control/test_box_metrics.py."""

from __future__ import annotations

from boxes import observed
from boxes.document import validate
from tests.boxes.test_derived import plans
from tests.paper import q1

TWO = q1(
    headless=True,
    boxes={"dear": {"type": "filter", "in": "merged", "where": "price > 10"}},
    outputs={"out2": {"from": "dear"}},
)


def test_a_box_upstream_of_two_outputs_is_read_from_the_first():
    plan = validate(TWO)
    assert observed.lineages(plan) == {
        "out1": frozenset({"in1", "in2", "merged", "avg"}),
        "out2": frozenset({"in1", "in2", "merged", "dear"}),
    }
    # a union is not observed: its rows are its inputs'
    assert observed.reader(plan) == {"in1": "out1", "in2": "out1", "avg": "out1", "dear": "out2"}


def test_rows_in_are_the_upstream_boxes_rows_out():
    plan = validate(TWO)
    counted = observed.per_box(plan, {"in1": 3, "in2": 2, "avg": 1, "dear": 4})
    assert counted == {
        "in1": {"rows_in": None, "rows_out": 3},
        "in2": {"rows_in": None, "rows_out": 2},
        "merged": {"rows_in": 5, "rows_out": 5},
        "avg": {"rows_in": 5, "rows_out": 1},
        "dear": {"rows_in": 5, "rows_out": 4},
        "out1": {"rows_in": 1, "rows_out": 1},
        "out2": {"rows_in": 4, "rows_out": 4},
    }
    nothing_yet = observed.per_box(plan, {})
    assert nothing_yet["merged"] == {"rows_in": 0, "rows_out": 0}
    mapped = validate(
        q1(
            headless=True,
            boxes={"m": {"type": "map", "in": "in1", "fields": {"p": "price"}}},
            outputs={"out2": {"from": "m"}},
        )
    )
    assert observed.per_box(mapped, {"in1": 7})["m"] == {"rows_in": 7, "rows_out": 7}


def test_a_box_is_about_the_sources_upstream_of_it_a_derived_input_about_its_outputs():
    plan = validate(TWO)
    about = observed.sources(plan)
    assert about["in1"] == {"in1"} and about["dear"] == {"in1", "in2"}
    _, down = plans()  # d reads upout (from streams a and z); m is a stream
    about = observed.sources(down)
    assert about["d"] == about["cheap"] == {"a", "z"}
    assert about["m"] == {"m"} and about["all"] == {"a", "m", "z"}
