"""Diagrams at a level, compiled on real Spark: inputs filtered before the first box, results
carrying the LUB of their contributors, ``_level`` readable in expressions only at a level."""

from __future__ import annotations

import dataclasses

import pytest

from boxes import codes
from boxes.compiler import compile_plan
from boxes.document import load_document, validate
from boxes.errors import DiagramInvalid, InvalidInput
from boxes.labels import LABEL_COLUMN
from boxes.levels import LEVEL_COLUMN, Lattice
from boxes.secfilter import label_sources
from tests.boxes.conftest import at

LATTICE = Lattice.of({"banks": ["A", "B"], "oil": ["X", "Y"]})
A, B, X, Y = (LATTICE.company_mask(c) for c in "ABXY")
SCHEMA = "{fields: {t: timestamp, k: string, v: long}, event_time: t}"


def plan_of(body: str, level: str | None, clearance: int | None = None, lattice=None):
    head = f"version: 1\nname: d\n{'level: ' + level if level else ''}\n"
    text = head + f"inputs:\n  a: {{schema: {SCHEMA}}}\n  b: {{schema: {SCHEMA}}}\n" + body
    plan = validate(load_document(text), lattice=lattice)
    return dataclasses.replace(plan, clearance=clearance) if clearance is not None else plan


def inputs(spark, plan, rows):
    """Frames with a ``_level`` column, as the runtime's source gives them."""
    schema = plan.input_schemas["a"].spark_type().add(LEVEL_COLUMN, "long")
    return {
        name: spark.createDataFrame(
            [(at(s), k, v, lvl) for s, k, v, lvl in rows.get(name, [])], schema=schema
        )
        for name in plan.inputs
    }


def run(spark, plan, rows):
    out = {}
    for name, frame in compile_plan(plan, inputs(spark, plan, rows)).items():
        table = frame.toArrow()
        sources = label_sources(table, plan.inputs)
        out[name] = [
            (row, tuple(src))
            for row, src in zip(
                table.drop_columns([LABEL_COLUMN]).to_pylist(), sources, strict=True
            )
        ]
    return out


ROWS = {
    "a": [(1, "k", 1, A), (2, "k", 2, A | X), (3, "k", 3, 0)],
    "b": [(1, "k", 10, B), (4, "k", 20, Y)],
}
UNION_AGG = """boxes:
  u: {type: union, in: [a, b]}
  s: {type: aggregate, in: u, window: {size: 10s, slide: 10s}, group_by: [k],
      aggregates: {total: sum(v), n: count(), top: max(_level)}}
outputs: {o: {from: s}}
"""


def test_the_window_sees_only_dominated_tuples_and_the_result_carries_their_lub(spark):
    plan = plan_of(UNION_AGG, "{banks: A, oil: T}", LATTICE.clearance(("A", "T")))
    [(row, sources)] = run(spark, plan, ROWS)["o"]
    # B's tuple is not dominated; A, A|X, public and Y are: 1 + 2 + 3 + 20
    assert (row["total"], row["n"]) == (26, 4)
    assert row[LEVEL_COLUMN] == A | X | Y and row["top"] == max(A | X, Y)
    assert sources == ("a", "b")


def test_a_filter_reads_the_level_and_a_join_ors_both_sides(spark):
    body = """boxes:
  pub: {type: filter, in: a, where: "_level = 0 or v = 2"}
  j: {type: join, left: pub, right: b, on: [k], within: 10s}
outputs: {o: {from: j}, p: {from: pub}}
"""
    plan = plan_of(body, "{banks: T, oil: T}", LATTICE.clearance(("T", "T")))
    out = run(spark, plan, ROWS)
    assert sorted((r["v"], r[LEVEL_COLUMN]) for r, _ in out["p"]) == [(2, A | X), (3, 0)]
    joined = sorted((r["left_v"], r["right_v"], r[LEVEL_COLUMN]) for r, _ in out["o"])
    assert joined == [(2, 10, A | X | B), (2, 20, A | X | Y), (3, 10, B), (3, 20, Y)]


def test_without_a_level_nothing_changes(spark):
    plan = plan_of(UNION_AGG.replace(", top: max(_level)", ""), None)
    [(row, _)] = run(spark, plan, ROWS)["o"]
    assert (row["total"], row["n"]) == (36, 5) and LEVEL_COLUMN not in row


def test_level_is_reserved_without_a_level_and_never_written():
    with pytest.raises(DiagramInvalid) as refused:
        plan_of(UNION_AGG, None)
    assert [p.code for p in refused.value.problems] == [codes.LABEL_REFERENCE]
    body = "boxes: {m: {type: map, in: a, fields: {_level: v}}}\noutputs: {o: {from: m}}\n"
    with pytest.raises(DiagramInvalid):
        plan_of(body, "{banks: A}")


def test_an_unresolved_level_is_refused_before_spark(spark):
    plan = plan_of(UNION_AGG, "{banks: A}")
    with pytest.raises(InvalidInput) as refused:
        compile_plan(plan, inputs(spark, plan, ROWS))
    assert refused.value.code == codes.LEVEL_UNRESOLVED


@pytest.mark.parametrize(
    ("level", "code"),
    [
        ("[A]", codes.WRONG_TYPE),
        ("{banks: 3}", codes.WRONG_TYPE),
        ("{'b-': A}", codes.INVALID_NAME),
    ],
)
def test_a_malformed_level_is_a_document_problem(level, code):
    with pytest.raises(DiagramInvalid) as refused:
        plan_of(UNION_AGG, level)
    assert [p.code for p in refused.value.problems] == [code]


LITERALS = """boxes:
  u: {type: union, in: [a, b]}
  one: {type: filter, in: u, where: "_level = LEVEL '[A, ⊥]' or _level = LEVEL '[B, Y]'"}
  named: {type: filter, in: u, where: "_level IN (LEVEL '[oil: X]', LEVEL '[banks: A, oil: X]')"}
outputs: {o: {from: one}, n: {from: named}}
"""


def test_a_level_literal_is_the_label_of_a_tuple_at_that_level(spark):
    """``LEVEL '[A, ⊥]'`` as the papers write it (or by class name) compares with ``_level``
    as the bits the runtime gives a tuple at that level: no bit pattern to learn."""
    rows = {
        "a": [(1, "k", 1, A), (2, "k", 2, A | X), (3, "k", 3, 0), (4, "k", 4, X)],
        "b": [(1, "k", 10, B | Y), (4, "k", 20, Y)],
    }
    plan = plan_of(LITERALS, "{banks: T, oil: T}", LATTICE.clearance(("T", "T")), LATTICE)
    out = run(spark, plan, rows)
    assert sorted(r["v"] for r, _ in out["o"]) == [1, 10]
    assert sorted(r["v"] for r, _ in out["n"]) == [2, 4]


@pytest.mark.parametrize(
    ("where", "level", "lattice", "code"),
    [
        ("_level = LEVEL '[A, ⊥]'", "{banks: A}", None, codes.INVALID_LITERAL),  # no catalog
        ("_level = LEVEL '[A]'", "{banks: A}", LATTICE, codes.LEVEL_BAD_SHAPE),
        ("_level = LEVEL '[X, ⊥]'", "{banks: A}", LATTICE, codes.LEVEL_UNKNOWN_COMPANY),
        ("_level = LEVEL '[cars: T]'", "{banks: A}", LATTICE, codes.LEVEL_BAD_SHAPE),
        ("_level = LEVEL 'A'", "{banks: A}", LATTICE, codes.LEVEL_BAD_SHAPE),
        ("LEVEL '[A, ⊥]' = 1", None, LATTICE, codes.INVALID_LITERAL),  # no _level here
    ],
)
def test_a_level_literal_is_checked_against_the_catalogs_companies(where, level, lattice, code):
    body = (
        "boxes:\n  u: {type: union, in: [a, b]}\n"
        f'  f: {{type: filter, in: u, where: "{where}"}}\noutputs: {{o: {{from: f}}}}\n'
    )
    with pytest.raises(DiagramInvalid) as refused:
        plan_of(body, level, lattice=lattice)
    assert [p.code for p in refused.value.problems] == [code]


def test_a_field_named_level_is_still_a_field():
    schema = "{fields: {t: timestamp, level: long}, event_time: t}"
    text = (
        f"version: 1\nname: d\ninputs: {{a: {{schema: {schema}}}}}\n"
        "boxes: {f: {type: filter, in: a, where: 'level > 2'}}\noutputs: {o: {from: f}}\n"
    )
    (box,) = [b for b in validate(load_document(text)).boxes if b.name == "f"]
    assert box.where.fields == frozenset({"level"})
