"""The Borealis paper's examples (section 3.2 and the scenario of 4.1) on real Spark.

Figure 6: in1 and in2 merged by a union, then aggregated. A window's result is labelled with
the streams whose tuples fell in its group: {in1}, {in2} or {in1, in2}. A subscriber who may
read only in1 (Bob in the scenario) receives only the {in1} results.
The join example: in1 ⋈ in2 then a projection of in1's fields. Every result depends on both
streams, so it is labelled {in1, in2} and an in1-only reader receives nothing.
"""

from __future__ import annotations

from pyspark.sql import functions as F

from boxes.compiler import compile_plan
from boxes.document import load_document, validate
from boxes.secfilter import label_sources, readable_mask, secfilter
from tests.boxes.conftest import at, collect, frames
from tests.paper import as_yaml, q1

FIGURE_6 = as_yaml(q1(headless=True))
# Window [0s,10s): IBM only from in1, MSFT only from in2, ORCL from both.
FIGURE_6_DATA = {
    "in1": [
        {"time": at(1), "symbol": "IBM", "price": 10.0},
        {"time": at(2), "symbol": "IBM", "price": 20.0},
        {"time": at(3), "symbol": "ORCL", "price": 30.0},
    ],
    "in2": [
        {"time": at(4), "symbol": "MSFT", "price": 40.0},
        {"time": at(5), "symbol": "ORCL", "price": 50.0},
    ],
}

JOIN = """
version: 1
name: q2
schemas:
  s: {fields: {time: timestamp, x: long, a: string}, event_time: time}
inputs:
  in1: {schema: s}
  in2: {schema: s}
boxes:
  joined: {type: join, left: in1, right: in2, on: [x], within: 5s}
  proj:   {type: map, in: joined, fields: {time: left_time, x: x, a: left_a}}
outputs:
  out1: {from: proj}
"""
JOIN_DATA = {
    "in1": [
        {"time": at(1), "x": 1, "a": "p"},
        {"time": at(2), "x": 2, "a": "q"},
        {"time": at(3), "x": 3, "a": "r"},
    ],
    "in2": [
        {"time": at(2), "x": 1, "a": "u"},
        {"time": at(4), "x": 2, "a": "v"},
        {"time": at(30), "x": 3, "a": "w"},
    ],
}


def _run(spark, text, data, readable=None):
    plan = validate(load_document(text))
    frame = compile_plan(plan, frames(spark, plan, data))["out1"]
    table = frame.toArrow()
    if readable is not None:
        table = secfilter(table, readable_mask(plan.inputs, readable))
    return plan, table


def test_figure_6_results_carry_the_labels_of_the_paper(run_diagram):
    out = run_diagram(FIGURE_6, FIGURE_6_DATA)["out1"]
    by_symbol = {row["symbol"]: (row["n"], row["avg_price"], sources) for row, sources in out}
    assert by_symbol == {
        "IBM": (2, 15.0, ("in1",)),
        "MSFT": (1, 40.0, ("in2",)),
        "ORCL": (2, 40.0, ("in1", "in2")),
    }
    assert {row["window_start"] for row, _ in out} == {at(0)}
    assert {row["window_end"] for row, _ in out} == {at(10)}


def test_figure_6_labels_are_the_bit_vectors_1_2_and_3(spark):
    """As in the scenario: in1 has ID ...01, in2 ...10, their combination ...11 (= 3)."""
    _, table = _run(spark, FIGURE_6, FIGURE_6_DATA)
    words = {row["symbol"]: row["_label"] for row in table.to_pylist()}
    assert words == {"IBM": 1, "MSFT": 2, "ORCL": 3}


def test_figure_6_reader_of_in1_only_receives_in1_results(spark):
    plan, table = _run(spark, FIGURE_6, FIGURE_6_DATA, readable=["in1"])
    assert table.column("symbol").to_pylist() == ["IBM"]
    assert label_sources(table, plan.inputs) == [["in1"]]


def test_figure_6_reader_of_both_receives_every_result(spark):
    _, table = _run(spark, FIGURE_6, FIGURE_6_DATA, readable=["in1", "in2"])
    assert sorted(table.column("symbol").to_pylist()) == ["IBM", "MSFT", "ORCL"]


def test_join_results_are_labelled_with_both_streams(run_diagram):
    out = run_diagram(JOIN, JOIN_DATA)["out1"]
    assert sorted((row["x"], row["a"]) for row, _ in out) == [(1, "p"), (2, "q")]
    assert {sources for _, sources in out} == {("in1", "in2")}


def test_join_reader_of_in1_only_receives_nothing(spark):
    _, table = _run(spark, JOIN, JOIN_DATA, readable=["in1"])
    assert table.num_rows == 0
    _, both = _run(spark, JOIN, JOIN_DATA, readable=["in1", "in2"])
    assert both.num_rows == 2


def test_two_hundred_streams_unioned_and_aggregated(spark):
    """Labels are not capped at 64 sources: 200 streams need four words, bits 63 and 64 included."""
    names = [f"s{i:03d}" for i in range(200)]
    text = (
        "version: 1\nname: many\nschemas:\n  s: {fields: {t: timestamp, g: long}, event_time: t}\n"
        "inputs:\n"
        + "".join(f"  {n}: {{schema: s}}\n" for n in names)
        + f"boxes:\n  u: {{type: union, in: [{', '.join(names)}]}}\n"
        "  a: {type: aggregate, in: u, window: {size: 10s}, group_by: [g],\n"
        "      aggregates: {n: count()}}\n"
        "outputs:\n  out: {from: a}\n"
    )
    plan = validate(load_document(text))
    assert plan.label_words == 4 and plan.to_dict()["label"] == "sparse"
    # Stream i sends one tuple to group i % 7, so group g's label is {s_i : i % 7 == g}.
    # One-partition range sources keep 200 branches cheap to schedule.
    inputs = {
        n: spark.range(0, 1, 1, 1).select(F.lit(at(1)).alias("t"), F.lit(i % 7).alias("g"))
        for i, n in enumerate(names)
    }
    out = collect(plan, compile_plan(plan, inputs)["out"])
    assert len(out) == 7
    for row, sources in out:
        expected = tuple(n for i, n in enumerate(names) if i % 7 == row["g"])
        assert sources == expected
        assert row["n"] == len(expected)
