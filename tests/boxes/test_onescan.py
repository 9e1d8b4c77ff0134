"""A union of inputs one source reads, compiled as one scan (boxes/onescan.py): the same rows,
labels and levels as one branch per input, and no merge where a window depends on the
watermark."""

from __future__ import annotations

import dataclasses

import pytest

from boxes import onescan
from boxes.compiler import compile_plan
from boxes.document import load_document, validate
from boxes.levels import LEVEL_COLUMN, Lattice
from boxes.scan import STREAM_COLUMN, Scan
from tests.boxes.conftest import at

LATTICE = Lattice.of({"banks": ["A", "B"], "oil": ["X", "Y"]})
A, B, X = (LATTICE.company_mask(c) for c in "ABX")
HEAD = """
version: 1
name: d
schemas:
  s: {fields: {t: timestamp, k: string, v: long}, event_time: t}
inputs: {a: {schema: s}, b: {schema: s}, c: {schema: s}, d: {schema: s}}
"""
STATELESS = """
boxes:
  u: {type: union, in: [c, a, d]}
  f: {type: filter, in: u, where: "v >= 1"}
  m: {type: map, in: f, fields: {k: k, v: v * 2}}
outputs:
  out: {from: m}
  raw_b: {from: b}
"""
WINDOWED = """
boxes:
  u: {type: union, in: [a, b, c, d]}
  f: {type: filter, in: u, where: "v >= 1"}
  w: {type: aggregate, in: f, window: {size: 10s}, group_by: [k], aggregates: {n: count()}}
outputs:
  out: {from: w}
  rows: {from: f}
"""
# (stream, seconds, key, value, level) rows of the one source, the streams in its order.
STREAMS = ("a", "b", "c", "d")
ROWS = [
    ("a", 1, "x", 1, A),
    ("a", 2, "y", 0, 0),
    ("b", 1, "x", 5, B),
    ("c", 3, "x", 7, A | X),
    ("c", 4, "z", 8, 0),
    ("d", 2, "y", 9, X),
]


def plan_of(body: str, clearance: int | None = None):
    level = "level: {banks: A, oil: X}\n" if clearance is not None else ""
    plan = validate(load_document(level + HEAD + body), lattice=LATTICE)
    return dataclasses.replace(plan, clearance=clearance)


def scan_of(spark) -> Scan:
    """The rows as the runtime's source gives them: ``_stream`` first, ``_level`` after."""
    schema = f"{STREAM_COLUMN} int, t timestamp, k string, v long, {LEVEL_COLUMN} long"
    rows = [(STREAMS.index(s), at(t), k, v, lvl) for s, t, k, v, lvl in ROWS]
    return Scan(spark.createDataFrame(rows, schema=schema), STREAMS)


def tables(plan, scan: Scan, scans: tuple[Scan, ...]) -> dict[str, list]:
    outputs = compile_plan(plan, scan.frames(), scans=scans)
    return {name: sorted(map(str, frame.toArrow().to_pylist())) for name, frame in outputs.items()}


def branches(plan, scan: Scan, scans: tuple[Scan, ...]) -> int:
    """The unions in the output ``out``'s analyzed plan."""
    frame = compile_plan(plan, scan.frames(), scans=scans)["out"]
    return frame._jdf.queryExecution().analyzed().toString().count("Union")


@pytest.mark.parametrize("clearance", [None, A | X], ids=["no level", "at a level"])
def test_a_stateless_union_of_one_scan_is_one_branch_with_the_same_rows_and_labels(
    spark, clearance
):
    plan = plan_of(STATELESS, clearance)
    scan = scan_of(spark)
    assert set(onescan.merged(plan, (scan,))) == {"u"}
    assert branches(plan, scan, (scan,)) == 0
    assert branches(plan, scan, ()) > 0
    assert tables(plan, scan, (scan,)) == tables(plan, scan, ())


def test_a_union_with_a_window_downstream_keeps_a_branch_per_input(spark):
    plan = plan_of(WINDOWED)
    assert onescan.merged(plan, (scan_of(spark),)) == {}


def test_a_union_reads_one_scan_only_if_every_input_is_read_by_it_alone(spark):
    body = STATELESS.replace("raw_b: {from: b}", "raw_b: {from: b}\n  raw_a: {from: a}")
    assert onescan.merged(plan_of(body), (scan_of(spark),)) == {}
