"""Plans governed by security punctuations, compiled on real Spark: each result may be read by
the roles every tuple it derives from grants (the AND of their role masks, carried as the OR of
their complements in the label), copied by filter, map and union, merged through join and
aggregate; a plan no sp governs is unchanged."""

from __future__ import annotations

import dataclasses

import pytest

from boxes.compiler import compile_plan
from boxes.document import load_document, validate
from boxes.labels import DENIED_COLUMN, LABEL_COLUMN
from boxes.levels import LEVEL_COLUMN, Lattice
from boxes.secfilter import label_sources
from tests.boxes.conftest import at

D, N, C = 1, 2, 4  # doctor, nurse, cardiologist
ALL = D | N | C
SCHEMA = "{fields: {t: timestamp, k: string, v: long}, event_time: t}"


def plan_of(body: str, governed: bool = True, level: str = ""):
    head = f"version: 1\nname: d\n{'level: ' + level if level else ''}\n"
    text = head + f"inputs:\n  a: {{schema: {SCHEMA}}}\n  b: {{schema: {SCHEMA}}}\n" + body
    return dataclasses.replace(validate(load_document(text)), governed=governed)


def run(spark, plan, rows, clearance: int | None = None):
    """Each output's rows with the roles that may read them and their sources; ``rows``
    give each tuple's readers (as the source does, the complement: ``_sp_denied``)."""
    schema = plan.input_schemas["a"].spark_type()
    schema = schema.add(LEVEL_COLUMN, "long").add(DENIED_COLUMN, "long")
    frames = {
        name: spark.createDataFrame(
            [(at(s), k, v, 0, ~readers) for s, k, v, readers in rows.get(name, [])], schema
        )
        for name in plan.inputs
    }
    if clearance is not None:
        plan = dataclasses.replace(plan, clearance=clearance)
    out = {}
    for name, frame in compile_plan(plan, frames).items():
        table = frame.toArrow()
        sources = label_sources(table, plan.inputs)
        rows_out = table.drop_columns([LABEL_COLUMN]).to_pylist()
        out[name] = sorted(
            (
                {**r, "readers": ~r.pop(DENIED_COLUMN) & ALL, "sources": tuple(s)}
                for r, s in zip(rows_out, sources, strict=True)
            ),
            key=lambda r: (r.get("v") or 0, str(r)),
        )
    return out


ROWS = {
    "a": [(1, "k", 1, D | N), (2, "k", 2, D), (3, "j", 3, ALL)],
    "b": [(1, "k", 10, D | C), (4, "j", 20, N)],
}


def test_filter_map_and_union_copy_each_tuples_readers(spark):
    body = """boxes:
  f: {type: filter, in: a, where: "v > 1"}
  m: {type: map, in: f, fields: {w: "v * 2", k: k}}
  u: {type: union, in: [a, b]}
outputs: {o: {from: m}, all: {from: u}}
"""
    out = run(spark, plan_of(body), ROWS)
    assert [(r["w"], r["readers"]) for r in out["o"]] == [(4, D), (6, ALL)]
    assert [(r["v"], r["readers"]) for r in out["all"]] == [
        (1, D | N),
        (2, D),
        (3, ALL),
        (10, D | C),
        (20, N),
    ]


def test_a_join_result_is_for_the_roles_both_sides_grant(spark):
    body = """boxes:
  j: {type: join, left: a, right: b, on: [k], within: 10s}
outputs: {o: {from: j}}
"""
    out = run(spark, plan_of(body), ROWS)["o"]
    readers = sorted((r["left_v"], r["right_v"], r["readers"]) for r in out)
    # (1, 10): D|N & D|C; (2, 10): D & D|C; (3, 20): ALL & N
    assert readers == [(1, 10, D), (2, 10, D), (3, 20, N)]
    assert all(r["sources"] == ("a", "b") for r in out)


def test_an_aggregate_result_is_for_the_roles_every_tuple_of_its_group_grants(spark):
    body = """boxes:
  u: {type: union, in: [a, b]}
  s: {type: aggregate, in: u, window: {size: 10s, slide: 10s}, group_by: [k],
      aggregates: {total: sum(v)}}
outputs: {o: {from: s}}
"""
    out = run(spark, plan_of(body), ROWS)["o"]
    assert sorted((r["k"], r["total"], r["readers"]) for r in out) == [
        ("j", 23, N),  # ALL & N
        ("k", 13, D),  # D|N & D & D|C
    ]


def test_a_plan_at_a_level_carries_both_words(spark):
    lattice = Lattice.of({"banks": ["A"]})
    body = """boxes:
  u: {type: union, in: [a, b]}
outputs: {o: {from: u}}
"""
    plan = plan_of(body, level="{banks: A}")
    out = run(spark, plan, ROWS, lattice.clearance(("A",)))["o"]
    assert [(r["v"], r["readers"], r[LEVEL_COLUMN]) for r in out][:2] == [(1, D | N, 0), (2, D, 0)]


@pytest.mark.parametrize("governed", [False, True])
def test_only_a_governed_plan_has_the_column_and_its_fingerprint_differs(spark, governed):
    body = "boxes: {u: {type: union, in: [a, b]}}\noutputs: {o: {from: u}}\n"
    plan = plan_of(body, governed)
    (frame,) = compile_plan(plan, _plain(spark, plan)).values()
    assert (DENIED_COLUMN in frame.columns) is governed
    assert ("governed" in plan.to_dict()) is governed


def _plain(spark, plan):
    """Frames without ``_sp_denied`` (``sluice run``, a test): a governed plan reads 0."""
    schema = plan.input_schemas["a"].spark_type()
    return {name: spark.createDataFrame([(at(1), "k", 1)], schema) for name in plan.inputs}
