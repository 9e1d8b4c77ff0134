"""Labels above 64 sources (sparse sets of bit indexes) on real Spark, batch and streaming:
every box's merge, count windows' dense boundary, and the SecFilter's delivery against the
plain definition.

A plan's inputs are spread over a 4096-source label (``widened``: input j gets a bit far into
the label, bits 63 and 64 included), so the boxes run exactly as a diagram of 4096 inputs
would run them, without building 4096 Spark branches.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from functools import reduce

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType

from boxes import labels
from boxes.compiler import compile_plan
from boxes.document import Plan, load_document, validate
from boxes.input import InputBox
from boxes.levels import LEVEL_COLUMN
from boxes.output import STRONG, WEAK
from boxes.secfilter import deliveries, label_sources, readable_mask, rights
from tests.boxes.conftest import T0, at, frames, utc
from tests.boxes.test_levels_compile import LATTICE, UNION_AGG, A, X, Y
from tests.boxes.test_levels_compile import ROWS as LEVEL_ROWS
from tests.boxes.test_levels_compile import inputs as level_inputs
from tests.boxes.test_levels_compile import plan_of as levels_plan_of
from tests.boxes.test_property import diagrams, document, reference
from tests.boxes.test_semantics_spark import CHEAP_IN2, DATA, READER, figure_6
from tests.paper import as_yaml

SOURCES = 4096
BITS = (63, 64, 1000, 4095)  # word edges, the middle, the last bit


def widened(plan: Plan) -> tuple[Plan, list[str]]:
    """``plan`` with its inputs' bits spread over a 4096-source label, and the names of the
    4096 sources (``names[bit]`` is the input of that bit; the others are never read)."""
    words = labels.word_count(SOURCES)
    bits = dict(zip(plan.inputs, BITS, strict=False))
    boxes = tuple(
        dataclasses.replace(box, bit=bits[box.name], words=words)
        if isinstance(box, InputBox)
        else box
        for box in plan.boxes
    )
    names = [f"unused{i}" for i in range(SOURCES)]
    for name, bit in bits.items():
        names[bit] = name
    return dataclasses.replace(plan, boxes=boxes, label_words=words), names


def _collect(table, names: list[str]) -> list[tuple[dict, tuple[str, ...]]]:
    rows = table.drop_columns([labels.LABEL_COLUMN]).to_pylist()
    return [
        ({k: utc(v) for k, v in row.items()}, tuple(src))
        for row, src in zip(rows, label_sources(table, names), strict=True)
    ]


def _run(spark, text: str, data: dict) -> list[tuple[dict, tuple[str, ...]]]:
    plan, names = widened(validate(load_document(text)))
    (frame,) = compile_plan(plan, frames(spark, plan, data)).values()
    assert isinstance(frame.schema[labels.LABEL_COLUMN].dataType, ArrayType)
    return _collect(frame.toArrow(), names)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(diagrams(), st.data())
def test_sparse_labels_are_the_contributing_streams_and_delivery_is_the_definition(
    spark, diagram, data
):
    """The property test of ``test_property.py`` on sparse labels, plus the SecFilter: a
    subscriber receives exactly the tuples whose sources it may all (strong) or some (weak)
    read."""
    nodes, rows = diagram
    doc = document(nodes)
    plan, names = widened(validate(doc))
    outputs = compile_plan(
        plan,
        frames(
            spark,
            plan,
            {name: [{**r, "t": at(r["t"])} for r in rs] for name, rs in rows.items()},
        ),
    )
    tagged = [frame.withColumn("_out", F.lit(name)) for name, frame in outputs.items()]
    table = reduce(lambda a, b: a.unionByName(b), tagged).toArrow()
    assert pa.types.is_list(table.schema.field(labels.LABEL_COLUMN).type)
    got = _collect(table, names)
    expected_by_node = reference(nodes, rows)
    expected = Counter(
        (name, float(t), k, v, tuple(sorted(lab)))
        for name, out in doc["outputs"].items()
        for t, k, v, lab in expected_by_node[out["from"]]
    )
    assert (
        Counter(
            (row.pop("_out"), (row["t"] - T0).total_seconds(), row["k"], row["v"], sources)
            for row, sources in got
        )
        == expected
    )
    readable = set(data.draw(st.sets(st.sampled_from(list(plan.inputs)))))
    mask = readable_mask(names, readable)
    strong, weak = (deliveries(table, [mask], semantic)[0] for semantic in (STRONG, WEAK))
    sources = [set(s) for _, s in got]
    assert strong.tolist() == [i for i, s in enumerate(sources) if s <= readable]
    assert weak.tolist() == [i for i, s in enumerate(sources) if s & readable]


TWO_HUNDRED = [f"s{i:03d}" for i in range(200)]


def test_a_union_of_200_inputs_carries_one_index_per_tuple(spark):
    """A real 200-input union (no widening): each tuple's label is its input's one index."""
    text = (
        "version: 1\nname: wide\nschemas:\n  s: {fields: {t: timestamp, g: long}}\n"
        "inputs:\n"
        + "".join(f"  {n}: {{schema: s}}\n" for n in TWO_HUNDRED)
        + f"boxes:\n  u: {{type: union, in: [{', '.join(TWO_HUNDRED)}]}}\n"
        "outputs:\n  out: {from: u}\n"
    )
    plan = validate(load_document(text))
    inputs = {
        n: spark.range(0, 1, 1, 1).select(F.lit(at(1)).alias("t"), F.lit(i).alias("g"))
        for i, n in enumerate(TWO_HUNDRED)
    }
    table = compile_plan(plan, inputs)["out"].toArrow()
    groups, sets = (table.column(c).to_pylist() for c in ("g", labels.LABEL_COLUMN))
    assert sorted(zip(groups, sets, strict=True)) == [(i, [i]) for i in range(200)]
    (everyone, odd) = deliveries(
        table,
        [readable_mask(plan.inputs, plan.inputs), readable_mask(plan.inputs, TWO_HUNDRED[1::2])],
    )
    assert len(everyone) == 200
    assert sorted(table.column("g").take(odd).to_pylist()) == list(range(1, 200, 2))


MERGES = """
version: 1
name: merges
schemas:
  s: {fields: {t: timestamp, k: string, v: long}, event_time: t}
inputs: {a: {schema: s}, b: {schema: s}, c: {schema: s}}
boxes:
  u: {type: union, in: [a, b]}
  agg: {type: aggregate, in: u, window: {size: 10s}, group_by: [k], aggregates: {n: count()}}
  j: {type: join, left: agg, right: c, on: [k], within: 5s}
outputs:
  out: {from: j}
"""
MERGE_DATA = {
    "a": [{"t": at(1), "k": "x", "v": 1}, {"t": at(2), "k": "y", "v": 1}],
    "b": [{"t": at(3), "k": "x", "v": 1}],
    "c": [{"t": at(12), "k": "x", "v": 1}, {"t": at(12), "k": "y", "v": 1}],
}


def test_aggregate_and_join_merge_sparse_labels(spark):
    out = _run(spark, MERGES, MERGE_DATA)
    assert sorted((row["k"], row["n"], sources) for row, sources in out) == [
        ("x", 2, ("a", "b", "c")),
        ("y", 1, ("a", "c")),
    ]


COUNT_WINDOW = """
version: 1
name: cw
schemas:
  s: {fields: {t: timestamp, k: string, v: long}, event_time: t}
inputs: {a: {schema: s}, b: {schema: s}, c: {schema: s}}
boxes:
  u: {type: union, in: [a, b, c]}
  w: {type: aggregate, in: u, window: {rows: 2}, aggregates: {n: count()}}
outputs:
  out: {from: w}
"""


def test_a_count_window_ors_sparse_labels_through_dense_words(spark):
    data = {
        "a": [{"t": at(1), "k": "x", "v": 1}],
        "b": [{"t": at(2), "k": "x", "v": 1}],
        "c": [{"t": at(3), "k": "x", "v": 1}],
    }
    out = _run(spark, COUNT_WINDOW, data)
    assert sorted((row["window_end"], sources) for row, sources in out) == [
        (at(1), ("a",)),
        (at(2), ("a", "b")),
        (at(3), ("b", "c")),
    ]


def test_streaming_aggregate_and_join_keep_sparse_labels_across_batches(
    spark, stream_files, memory_query
):
    """The aggregate's state holds the distinct label sets it has seen; a later batch adds."""
    plan, names = widened(validate(load_document(MERGES)))
    out = compile_plan(plan, stream_files.frames(spark, plan))["out"]
    query = memory_query(out, "sparse_stream")
    stream_files.write("a", [{"t": at(1), "k": "x", "v": 1}])
    stream_files.write("c", [{"t": at(12), "k": "x", "v": 1}])
    query.processAllAvailable()
    stream_files.write("b", [{"t": at(3), "k": "x", "v": 1}])
    query.processAllAvailable()
    assert spark.table("sparse_stream").count() == 0
    for name in ("a", "b", "c"):
        stream_files.write(name, [{"t": at(40), "k": "z", "v": 1}])
    query.processAllAvailable()
    table = spark.table("sparse_stream").toArrow()
    got = _collect(table, names)
    found = [(row["k"], row["n"], sources) for row, sources in got]
    assert found == [("x", 2, ("a", "b", "c"))]
    (picked,) = deliveries(table, [readable_mask(names, ["a", "b"])])
    assert picked.tolist() == []


def test_read_aggregate_on_sparse_labels(spark):
    """Figure 6 on a 4096-source label: the averages' raw sources split off as an empty set,
    so READ_AGGREGATE on in2 receives them; the filter over in2 stays raw."""
    doc = figure_6(boxes=CHEAP_IN2, outputs={"raw": {"from": "cheap"}})
    plan, names = widened(validate(load_document(as_yaml(doc))))
    outputs = compile_plan(plan, frames(spark, plan, DATA))
    averages = outputs["out1"].toArrow().sort_by("window_start")
    filtered = outputs["raw"].toArrow()
    assert averages.column(labels.RAW_COLUMN).to_pylist() == [[], [], []]
    assert averages.column(labels.LABEL_COLUMN).to_pylist() == [[63, 64], [64], [63]]
    reader = rights(names, READER["tuples"], READER["aggregates"])
    assert deliveries(averages, [reader])[0].tolist() == [0, 1, 2]
    assert deliveries(filtered, [reader])[0].tolist() == []
    assert deliveries(filtered, [rights(names, ["in2"])])[0].tolist() == [0, 1]
    only_aggregates = rights(names, [], ["in2"])
    assert deliveries(averages, [only_aggregates])[0].tolist() == [1]
    assert deliveries(averages, [only_aggregates], WEAK)[0].tolist() == [0, 1]


@pytest.mark.parametrize("window", ["{size: 10s, slide: 10s}", "{rows: 5}"])
def test_a_diagram_at_a_level_merges_the_level_word_beside_a_sparse_set(spark, window):
    """The level rides as ``w0`` beside the sparse set: ``_level`` reads it in an expression,
    a time or count window ORs it, and the output splits it off."""
    body = UNION_AGG.replace("{size: 10s, slide: 10s}", window)
    plan = levels_plan_of(body, "{banks: A, oil: T}", LATTICE.clearance(("A", "T")))
    plan, names = widened(plan)
    (frame,) = compile_plan(plan, level_inputs(spark, plan, LEVEL_ROWS)).values()
    assert isinstance(frame.schema[labels.LABEL_COLUMN].dataType, ArrayType)
    got = _collect(frame.toArrow(), names)
    last = max(got, key=lambda r: r[0]["n"])
    row, sources = last
    assert (row["total"], row["n"]) == (26, 4)  # B's tuple is not dominated
    assert row[LEVEL_COLUMN] == A | X | Y and row["top"] == max(A | X, Y)
    assert sources == ("a", "b")
