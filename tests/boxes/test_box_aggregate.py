"""The aggregate box on real Spark: windows, groups, aggregates, the OR of labels, streaming."""

from __future__ import annotations

from boxes.compiler import compile_plan
from boxes.document import load_document, validate
from tests.boxes.conftest import AGGREGATES, OVER_UNION, at, collect

DATA = {
    "in1": [{"t": at(1), "k": "x", "v": 1}, {"t": at(7), "k": "y", "v": 3}],
    "in2": [{"t": at(8), "k": "x", "v": 5}, {"t": at(12), "k": "x", "v": None}],
}


def _rows(out):
    return sorted(
        (
            (
                row["window_start"],
                row.get("k"),
                row["n"],
                row["total"],
                row["lo"],
                row["hi"],
                row["mean"],
            ),
            sources,
        )
        for row, sources in out
    )


def test_tumbling_windows_group_and_or_the_labels(run_diagram):
    out = run_diagram(AGGREGATES % ("{size: 10s}", "[k]"), DATA)["out"]
    assert _rows(out) == [
        ((at(0), "x", 2, 6, 1, 5, 3.0), ("in1", "in2")),
        ((at(0), "y", 1, 3, 3, 3, 3.0), ("in1",)),
        ((at(10), "x", 1, None, None, None, None), ("in2",)),
    ]
    assert {row["window_end"] - row["window_start"] for row, _ in out} == {at(10) - at(0)}


def test_sliding_windows_count_a_tuple_in_every_window_that_covers_it(run_diagram):
    out = run_diagram(AGGREGATES % ("{size: 10s, slide: 5s}", "[]"), DATA)["out"]
    assert [(r[0], r[2], s) for r, s in _rows(out)] == [
        (at(-5), 1, ("in1",)),
        (at(0), 3, ("in1", "in2")),
        (at(5), 3, ("in1", "in2")),
        (at(10), 1, ("in2",)),
    ]


def test_output_fields_and_event_time():
    plan = validate(load_document(AGGREGATES % ("{size: 10s}", "[k]")))
    schema = plan.outputs["out"]
    assert schema.names == ["window_start", "window_end", "k", "n", "total", "lo", "hi", "mean"]
    assert schema.event_time == "window_end"


CHAIN = (
    OVER_UNION % "chain"
    + """\
  small: {type: aggregate, in: u, window: {size: 10s}, group_by: [k], aggregates: {n: count()}}
  big: {type: aggregate, in: small, window: {size: 30s}, aggregates: {windows: count(), n: sum(n)}}
outputs:
  out: {from: big}
"""
)


def test_streaming_chained_aggregates_emit_once_the_watermark_passes(
    spark, stream_files, memory_query
):
    """A 10 s aggregate feeds a 30 s one in append mode; results are timed at window_end.

    The 10 s windows [0,10) and [10,20) end at 10 s and 20 s, so they land in [0,30); the
    window [20,30) ends at 30 s and lands in [30,60). Nothing is emitted before the watermark
    (the largest event time seen, lateness 0) passes a window's end.
    """
    plan = validate(load_document(CHAIN))
    out = compile_plan(plan, stream_files.frames(spark, plan))["out"]
    stream_files.write("in1", [{"t": at(1), "k": "a", "v": 1}, {"t": at(12), "k": "a", "v": 1}])
    stream_files.write("in2", [{"t": at(25), "k": "b", "v": 1}, {"t": at(3), "k": "b", "v": 1}])
    query = memory_query(out, "chained_aggregates")
    query.processAllAvailable()
    assert spark.table("chained_aggregates").count() == 0
    stream_files.write("in1", [{"t": at(95), "k": "a", "v": 1}])
    query.processAllAvailable()
    stream_files.write("in2", [{"t": at(96), "k": "b", "v": 1}])
    query.processAllAvailable()
    result = collect(plan, spark.table("chained_aggregates"))
    assert sorted((r["window_start"], r["windows"], r["n"], s) for r, s in result) == [
        (at(0), 3, 3, ("in1", "in2")),
        (at(30), 1, 1, ("in2",)),
    ]


AGGREGATE_THEN_JOIN = """
version: 1
name: aj
schemas:
  s: {fields: {t: timestamp, k: string, v: long}, event_time: t}
inputs: {in1: {schema: s}, in2: {schema: s}}
boxes:
  a: {type: aggregate, in: in1, window: {size: 10s}, group_by: [k], aggregates: {n: count()}}
  j: {type: join, left: a, right: in2, on: [k], within: 5s}
outputs:
  out: {from: j}
"""


def test_streaming_join_after_an_aggregate_matches_on_window_end(spark, stream_files, memory_query):
    """The result of window [0,10) is an event at 10 s: it meets in2's tuple at 12 s, not the one
    at 16 s."""
    plan = validate(load_document(AGGREGATE_THEN_JOIN))
    out = compile_plan(plan, stream_files.frames(spark, plan))["out"]
    stream_files.write("in1", [{"t": at(1), "k": "a", "v": 1}, {"t": at(2), "k": "a", "v": 1}])
    stream_files.write("in2", [{"t": at(12), "k": "a", "v": 7}, {"t": at(16), "k": "a", "v": 8}])
    query = memory_query(out, "aggregate_then_join")
    query.processAllAvailable()
    stream_files.write("in1", [{"t": at(40), "k": "b", "v": 1}])
    stream_files.write("in2", [{"t": at(40), "k": "b", "v": 1}])
    query.processAllAvailable()
    result = collect(plan, spark.table("aggregate_then_join"))
    assert [(r["window_end"], r["n"], r["t"], r["v"], s) for r, s in result] == [
        (at(10), 2, at(12), 7, ("in1", "in2"))
    ]
