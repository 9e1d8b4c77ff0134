"""The union box on real Spark: every tuple of every branch, each keeping its own label."""

from __future__ import annotations

from tests.boxes.conftest import at

DOC = """
version: 1
name: u
schemas:
  s: {fields: {t: timestamp, v: long}, event_time: t}
inputs: {a: {schema: s}, b: {schema: s}, c: {schema: s}}
boxes:
  ab: {type: union, in: [a, b]}
  abc: {type: union, in: [ab, c]}
  ca: {type: union, in: [c, a]}
outputs:
  out: {from: abc}
  out2: {from: ca}
"""


def test_tuples_keep_their_own_label_through_nested_unions(run_diagram):
    data = {name: [{"t": at(i), "v": i}] for i, name in enumerate("abc")}
    outs = run_diagram(DOC, data)
    assert sorted((r["v"], s) for r, s in outs["out"]) == [(0, ("a",)), (1, ("b",)), (2, ("c",))]
    assert sorted((r["v"], s) for r, s in outs["out2"]) == [(0, ("a",)), (2, ("c",))]
