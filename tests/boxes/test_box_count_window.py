"""The aggregate box's count windows on real Spark (``transformWithStateInPandas``): per group
and over the whole stream, labels the OR of the window's tuples, batch and streaming alike, and
the document's checks of ``window: {rows, slide}``."""

from __future__ import annotations

import pytest

from boxes import codes
from boxes.compiler import compile_plan
from boxes.document import load_document, validate
from boxes.errors import DiagramInvalid
from tests.boxes.conftest import AGGREGATES, at, collect
from tests.boxes.test_countwindow import reference

DATA = {
    "in1": [
        {"t": at(1), "k": "x", "v": 1},
        {"t": at(2), "k": "y", "v": 10},
        {"t": at(3), "k": "x", "v": 2},
    ],
    "in2": [{"t": at(4), "k": "x", "v": 4}, {"t": at(5), "k": "y", "v": 20}],
}


def _rows(out):
    return sorted(
        (
            (
                row.get("k"),
                row["window_end"],
                row["window_start"],
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


def test_per_group_count_window_with_labels_or(run_diagram):
    out = run_diagram(AGGREGATES % ("{rows: 2}", "[k]"), DATA)["out"]
    assert _rows(out) == [
        (("x", at(1), at(1), 1, 1, 1, 1, 1.0), ("in1",)),
        (("x", at(3), at(1), 2, 3, 1, 2, 1.5), ("in1",)),
        (("x", at(4), at(3), 2, 6, 2, 4, 3.0), ("in1", "in2")),
        (("y", at(2), at(2), 1, 10, 10, 10, 10.0), ("in1",)),
        (("y", at(5), at(2), 2, 30, 10, 20, 15.0), ("in1", "in2")),
    ]


def test_whole_stream_count_window_with_a_slide(run_diagram):
    out = run_diagram(AGGREGATES % ("{rows: 3, slide: 2}", "[]"), DATA)["out"]
    # Results after the 2nd and 4th tuple by event time: (1, 2) and (2, 3, 4).
    assert [(r[1], r[3], r[4], s) for r, s in _rows(out)] == [
        (at(2), 2, 11, ("in1",)),
        (at(4), 3, 16, ("in1", "in2")),
    ]


def test_batch_run_matches_the_reference(spark, run_diagram):
    times = [5, 3, 3, 9, 1, 7, 7, 2, 8, 6, 4, 4]
    rows = [{"t": at(t), "k": "x", "v": i} for i, t in enumerate(times)]
    out = run_diagram(AGGREGATES % ("{rows: 4}", "[k]"), {"in1": rows, "in2": []})["out"]
    # A batch run replays its rows in event-time order, ties in file order.
    tuples = sorted(((t, i, 1, i, None) for i, t in enumerate(times)), key=lambda r: r[:2])
    want = [(at(r[0]), at(r[1]), r[2], r[4]) for r in reference(4, 1, tuples)]
    got = [(r["window_start"], r["window_end"], r["n"], r["total"]) for r, _ in out]
    assert sorted(got, key=str) == sorted(want, key=str)


def test_streaming_batches_carry_the_window_over(spark, stream_files, memory_query):
    plan = validate(load_document(AGGREGATES % ("{rows: 2}", "[k]")))
    frame = compile_plan(plan, stream_files.frames(spark, plan))["out"]
    query = memory_query(frame, "count_window_stream")
    stream_files.write("in1", DATA["in1"])
    query.processAllAvailable()
    stream_files.write("in2", DATA["in2"])
    query.processAllAvailable()
    got = collect(plan, spark.table("count_window_stream"))
    assert [r for r in _rows(got) if r[0][0] == "x"][-1] == (
        ("x", at(4), at(3), 2, 6, 2, 4, 3.0),
        ("in1", "in2"),
    )


def test_the_streams_last_rows_grouped_across_batches(spark, stream_files, memory_query):
    """``partitioned: false``: one window of the stream's last 3 tuples, grouped by k; each
    instant emits the groups whose row changed, the window and the last relation carried in
    Spark's state from one micro-batch to the next."""
    plan = validate(load_document(AGGREGATES % ("{rows: 3, partitioned: false}", "[k]")))
    frame = compile_plan(plan, stream_files.frames(spark, plan))["out"]
    query = memory_query(frame, "count_window_grouped")
    stream_files.write("in1", DATA["in1"])
    query.processAllAvailable()
    stream_files.write("in2", DATA["in2"])
    query.processAllAvailable()
    got = collect(plan, spark.table("count_window_grouped"))
    # Windows: [x1] [x1 y10] [x1 y10 x2] | [y10 x2 x4] [x2 x4 y20]
    assert sorted((r["k"], r["n"], r["total"], r["window_end"]) for r, _ in got) == [
        ("x", 1, 1, at(1)),
        ("x", 2, 3, at(3)),
        ("x", 2, 6, at(4)),  # x1 left, x4 came: (2, 6)
        ("y", 1, 10, at(2)),
        ("y", 1, 20, at(5)),  # y10 left, y20 came: count 1 again, a new sum
    ]
    # A row's label is its group's tuples': x2 (in1) and x4 (in2); y20 alone (in2).
    assert {(r["k"], r["window_end"]): s for r, s in got}[("x", at(4))] == ("in1", "in2")
    assert {(r["k"], r["window_end"]): s for r, s in got}[("y", at(5))] == ("in2",)


@pytest.mark.parametrize(
    ("window", "code", "path"),
    [
        ("{size: 10s, partitioned: false}", codes.WINDOW_KIND, "boxes.a.window.partitioned"),
        ("{rows: 5, partitioned: 'no'}", codes.WRONG_TYPE, "boxes.a.window.partitioned"),
        ("{rows: 0}", codes.INVALID_COUNT, "boxes.a.window.rows"),
        ("{rows: '10'}", codes.INVALID_COUNT, "boxes.a.window.rows"),
        ("{rows: 5, slide: 6}", codes.INVALID_COUNT, "boxes.a.window.slide"),
        ("{rows: 5, slide: 1s}", codes.WINDOW_KIND, "boxes.a.window.slide"),
        ("{size: 10s, slide: 2}", codes.WINDOW_KIND, "boxes.a.window.slide"),
        ("{size: 10s, rows: 5}", codes.WINDOW_KIND, "boxes.a.window"),
        ("{}", codes.WINDOW_KIND, "boxes.a.window"),
        # A time window's WHERE is a filter before it (the same, tuple by tuple).
        ("{size: 10s}, where: 'v > 1'", codes.WINDOW_KIND, "boxes.a.where"),
    ],
)
def test_bad_count_windows_are_refused(window, code, path):
    with pytest.raises(DiagramInvalid) as err:
        validate(load_document(AGGREGATES % (window, "[k]")))
    assert [(p.code, p.path) for p in err.value.problems] == [(code, path)]


def test_count_window_results_have_no_event_time():
    plan = validate(load_document(AGGREGATES % ("{rows: 5}", "[k]")))
    assert plan.outputs["out"].event_time is None
