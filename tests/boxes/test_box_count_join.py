"""The join box bounded by count windows (``rows: {left, right}``) on real Spark: pairs with the
other side's window when a tuple enters, labels left OR right, batch and streaming across
micro-batches against the plain-Python reference, at a level, and the document's checks."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boxes import codes
from boxes.compiler import compile_plan
from boxes.document import load_document, validate
from boxes.errors import DiagramInvalid
from boxes.levels import LEVEL_COLUMN, Lattice
from tests.boxes.conftest import at, collect
from tests.boxes.test_countjoin import reference

DOC = """
version: 1
name: cj
schemas:
  s: {fields: {t: timestamp, k: string, v: long}, event_time: t}
inputs:
  l: {schema: s}
  r: {schema: s}
boxes:
  j: {type: join, left: l, right: r, on: [k], %s}
outputs:
  out: {from: j}
"""


def test_output_has_both_sides_fields_and_no_event_time():
    schema = validate(load_document(DOC % "rows: {left: 2, right: 3}")).outputs["out"]
    assert schema.names == ["left_t", "k", "left_v", "right_t", "right_v"]
    assert schema.event_time is None


def _pairs(out):
    return sorted((r["left_v"], r["right_v"], r["left_t"], s) for r, s in out)


def test_batch_run_pairs_each_entering_tuple_with_the_other_window(run_diagram):
    """A batch replays by event time: l1 meets nothing; r2 and r3 meet l1; l4 (pushing l1 out,
    no retraction) meets r2 and r3; r5 pushes r2 out and meets l4; y never matches x."""
    data = {
        "l": [
            {"t": at(1), "k": "x", "v": 1},
            {"t": at(4), "k": "x", "v": 4},
            {"t": at(6), "k": "y", "v": 6},
        ],
        "r": [
            {"t": at(2), "k": "x", "v": 2},
            {"t": at(3), "k": "x", "v": 3},
            {"t": at(5), "k": "x", "v": 5},
        ],
    }
    out = run_diagram(DOC % "rows: {left: 1, right: 2}", data)["out"]
    both = ("l", "r")
    assert _pairs(out) == [
        (1, 2, at(1), both),
        (1, 3, at(1), both),
        (4, 2, at(4), both),
        (4, 3, at(4), both),
        (4, 5, at(4), both),
    ]


def test_windows_keep_nulls_and_times_across_micro_batches(spark, stream_files, memory_query):
    """Two inputs, one micro-batch per file: each window survives in the step's state (Arrow
    IPC), NULL values and timestamps included, and meets the other side's later tuples."""
    plan = validate(load_document(DOC % "rows: {left: 2, right: 2}"))
    out = compile_plan(plan, stream_files.frames(spark, plan))["out"]
    query = memory_query(out, "count_join_nulls")
    for name, row in [
        ("l", {"t": at(1), "k": "x", "v": None}),
        ("r", {"t": at(2), "k": "x", "v": None}),
        ("l", {"t": at(3), "k": "x", "v": 3}),
        ("r", {"t": at(4), "k": "x", "v": 5}),
    ]:
        stream_files.write(name, [row])
        query.processAllAvailable()
    got = [r for r, _ in collect(plan, spark.table("count_join_nulls"))]
    assert sorted(
        ((r["left_v"], r["right_v"], r["left_t"], r["right_t"]) for r in got), key=str
    ) == [
        (3, 5, at(3), at(4)),
        (3, None, at(3), at(2)),
        (None, 5, at(1), at(4)),
        (None, None, at(1), at(2)),
    ]


@pytest.mark.parametrize(
    ("bound", "code", "path"),
    [
        ("within: 5s, rows: {left: 1, right: 1}", codes.JOIN_BOUND, "boxes.j"),
        ("on2: 1", codes.UNKNOWN_PARAMETER, "boxes.j.on2"),
        ("rows: {left: 0, right: 1}", codes.INVALID_COUNT, "boxes.j.rows.left"),
        ("rows: {left: 1}", codes.MISSING_PARAMETER, "boxes.j.rows.right"),
    ],
)
def test_bad_bounds_are_refused(bound, code, path):
    with pytest.raises(DiagramInvalid) as err:
        validate(load_document(DOC % bound))
    assert (code, path) in [(p.code, p.path) for p in err.value.problems]


def test_a_join_needs_a_bound():
    with pytest.raises(DiagramInvalid) as err:
        validate(load_document(DOC.replace(", %s", "")))
    assert [(p.code, p.path) for p in err.value.problems] == [(codes.JOIN_BOUND, "boxes.j")]


# A self-join at a level, as Q6: one stream, each side a filter of it (a tuple marked 'b' is on
# both), tuples of four companies; the diagram at [T, A] drops company B's before the windows.
STREAMING = """
version: 1
name: cjs
level: {coi1: T, coi2: A}
schemas:
  s: {fields: {t: timestamp, side: string, k: string, v: long}, event_time: t}
inputs:
  m: {schema: s}
boxes:
  l: {type: filter, in: m, where: "side <> 'r'"}
  r: {type: filter, in: m, where: "side <> 'l'"}
  j: {type: join, left: l, right: r, on: [k], rows: {left: %d, right: %d}}
outputs:
  out: {from: j}
"""
LATTICE = Lattice.of({"coi1": ["C1", "C2"], "coi2": ["A", "B"]})
COMPANIES = ("C1", "C2", "A", "B")
_queries = iter(range(10**6))


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    st.lists(
        st.tuples(
            st.sampled_from("lrb"),
            st.integers(0, 12),  # event times: ties, and tuples late within and across batches
            st.sampled_from(["a", "b", None]),
            st.sampled_from(COMPANIES),
        ),
        min_size=1,
        max_size=24,
    ),
    st.integers(1, 4),
    st.integers(1, 4),
    st.lists(st.integers(1, 23), min_size=1, max_size=3),
)
def test_streaming_count_join_matches_the_reference(spark, tmp_path, drawn, n, m, cuts):
    plan = validate(load_document(STREAMING % (n, m)))
    plan = dataclasses.replace(plan, clearance=LATTICE.clearance(("T", "A")))
    folder = tmp_path / f"m{next(_queries)}"
    folder.mkdir()
    schema = plan.input_schemas["m"].spark_type().add("_arrival", "long").add(LEVEL_COLUMN, "long")
    frame = spark.readStream.schema(schema).json(str(folder))
    out = compile_plan(plan, {"m": frame})["out"]
    rows = [
        {
            "t": at(t).isoformat(),
            "side": s,
            "k": k,
            "v": i,
            "_arrival": i,
            LEVEL_COLUMN: LATTICE.company_mask(c),
        }
        for i, (s, t, k, c) in enumerate(drawn)
    ]
    name = f"count_join_{next(_queries)}"
    query = out.writeStream.format("memory").queryName(name).outputMode("append").start()
    try:
        edges = sorted({0, len(rows), *[c for c in cuts if c < len(rows)]})
        for j, (a, b) in enumerate(zip(edges, edges[1:], strict=False)):
            tmp = tmp_path / f".{name}_{j}"
            tmp.write_text("".join(json.dumps(r) + "\n" for r in rows[a:b]))
            tmp.rename(folder / f"{j:04d}.json")
            query.processAllAvailable()  # one micro-batch (or more) per file
        got = collect(plan, spark.table(name))
    finally:
        query.stop()
    # The reference: company B's tuples never reach a window; a pair's level is the OR of its
    # tuples' levels (the label's level word), its sources the one stream's.
    kept = [
        (side, t, i, k, LATTICE.company_mask(c), i)
        for i, (s, t, k, c) in enumerate(drawn)
        if c != "B"
        for side in ((0, 1) if s == "b" else (0,) if s == "l" else (1,))
    ]
    want = reference((n, m), kept)
    assert all(sources == ("m",) for _, sources in got)
    assert sorted(
        (r["k"], r["left_v"], r["k"], r["right_v"], r[LEVEL_COLUMN]) for r, _ in got
    ) == sorted(want)
    for r, _ in got:
        assert r["left_t"] == at(drawn[r["left_v"]][1])
