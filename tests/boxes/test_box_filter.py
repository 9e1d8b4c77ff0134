"""The filter box against real Spark: the predicate decides, NULL drops, the label is copied."""

from __future__ import annotations

from tests.boxes.conftest import at

DOC = """
version: 1
name: f
inputs:
  in1: {schema: {fields: {t: timestamp, k: string, v: long}, event_time: t}}
boxes:
  f: {type: filter, in: in1, where: "%s"}
outputs:
  out: {from: f}
"""
ROWS = [
    {"t": at(1), "k": "a", "v": 1},
    {"t": at(2), "k": "b", "v": 5},
    {"t": at(3), "k": None, "v": None},
]


def test_keeps_rows_where_the_predicate_holds_and_copies_the_label(run_diagram):
    out = run_diagram(DOC % "v > 2", {"in1": ROWS})["out"]
    assert out == [({"t": at(2), "k": "b", "v": 5}, ("in1",))]


def test_null_predicate_drops_the_row(run_diagram):
    out = run_diagram(DOC % "k = 'a' or v > 100", {"in1": ROWS})["out"]
    assert [row["k"] for row, _ in out] == ["a"]


def test_bad_values_do_not_fail_the_query(run_diagram):
    """ANSI mode raises on overflow and division by zero unless the compiled form avoids it."""
    out = run_diagram(DOC % "v * 9223372036854775807 > 0 or v / 0 > 1 or true", {"in1": ROWS})[
        "out"
    ]
    assert len(out) == 3
