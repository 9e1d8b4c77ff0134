"""The join box on real Spark: equal keys within an event-time bound, a key once under its own
name and other shared names prefixed, left|right labels."""

from __future__ import annotations

import pytest

from boxes.compiler import compile_plan
from boxes.document import load_document, validate
from tests.boxes.conftest import at, collect

DOC = """
version: 1
name: j
inputs:
  trades: {schema: {fields: {t: timestamp, sym: string, qty: long}, event_time: t}}
  quotes: {schema: {fields: {t: timestamp, sym: string, bid: double}, event_time: t}}
boxes:
  j: {type: join, left: trades, right: quotes, on: [sym], within: 5s}
outputs:
  out: {from: j}
"""
TRADES = [
    {"t": at(10), "sym": "A", "qty": 1},
    {"t": at(10), "sym": "B", "qty": 2},
    {"t": at(10), "sym": None, "qty": 3},
]


def test_output_fields_are_left_then_right_the_key_once_and_prefixed_where_shared():
    schema = validate(load_document(DOC)).outputs["out"]
    assert schema.names == ["left_t", "sym", "qty", "right_t", "bid"]
    assert schema.event_time == "left_t"


@pytest.mark.parametrize(
    "quote_time, matches", [(5, True), (15, True), (4.999, False), (15.001, False)]
)
def test_the_bound_is_inclusive_on_both_sides(run_diagram, quote_time, matches):
    quotes = [{"t": at(quote_time), "sym": "A", "bid": 9.5}]
    out = run_diagram(DOC, {"trades": TRADES, "quotes": quotes})["out"]
    assert [(r["sym"], r["qty"], r["bid"], s) for r, s in out] == (
        [("A", 1, 9.5, ("quotes", "trades"))] if matches else []
    )


def test_null_keys_never_match(run_diagram):
    quotes = [{"t": at(10), "sym": None, "bid": 1.0}]
    assert run_diagram(DOC, {"trades": TRADES, "quotes": quotes})["out"] == []


def test_streaming_join_matches_across_micro_batches_and_drops_late_tuples(
    spark, stream_files, memory_query
):
    plan = validate(load_document(DOC))
    out = compile_plan(plan, stream_files.frames(spark, plan))["out"]
    stream_files.write("trades", TRADES)
    query = memory_query(out, "streaming_join")
    query.processAllAvailable()
    stream_files.write(
        "quotes", [{"t": at(12), "sym": "A", "bid": 9.5}, {"t": at(30), "sym": "B", "bid": 1.0}]
    )
    stream_files.write("trades", [{"t": at(40), "sym": "C", "qty": 4}])
    query.processAllAvailable()
    # The watermark is now min(40 s, 30 s): this quote is late and the B trade left the state.
    stream_files.write("quotes", [{"t": at(11), "sym": "B", "bid": 2.0}])
    query.processAllAvailable()
    result = collect(plan, spark.table("streaming_join"))
    assert [(r["sym"], r["right_t"], r["bid"], s) for r, s in result] == [
        ("A", at(12), 9.5, ("quotes", "trades"))
    ]


CHAIN = DOC.replace(
    "outputs:\n  out: {from: j}",
    """  a: {type: aggregate, in: j, window: {size: 10s}, group_by: [sym],
      aggregates: {n: count(), q: sum(qty)}}
outputs:
  out: {from: a}""",
)


def test_streaming_aggregate_after_a_join_windows_by_the_left_event_time(
    spark, stream_files, memory_query
):
    plan = validate(load_document(CHAIN))
    out = compile_plan(plan, stream_files.frames(spark, plan))["out"]
    stream_files.write("trades", TRADES + [{"t": at(14), "sym": "A", "qty": 5}])
    stream_files.write("quotes", [{"t": at(12), "sym": "A", "bid": 9.5}])
    query = memory_query(out, "join_then_aggregate")
    query.processAllAvailable()
    stream_files.write("trades", [{"t": at(60), "sym": "Z", "qty": 1}])
    stream_files.write("quotes", [{"t": at(60), "sym": "Y", "bid": 1.0}])
    query.processAllAvailable()
    result = collect(plan, spark.table("join_then_aggregate"))
    assert [(r["window_start"], r["sym"], r["n"], r["q"], s) for r, s in result] == [
        (at(10), "A", 2, 6, ("quotes", "trades"))
    ]
