"""The map box on real Spark: only the named fields come out, the label and event time pass
through."""

from __future__ import annotations

from boxes.document import load_document, validate
from tests.boxes.conftest import at

DOC = """
version: 1
name: m
inputs:
  in1: {schema: {fields: {t: timestamp, k: string, v: long}, event_time: t}}
boxes:
  m: {type: map, in: in1, fields: {%s}}
  %s
outputs:
  out: {from: %s}
"""


def test_only_the_named_fields_come_out_with_the_label(run_diagram):
    out = run_diagram(
        DOC % ("k2: upper(k), double: v * 2", "", "m"), {"in1": [{"t": at(1), "k": "a", "v": 2}]}
    )["out"]
    assert out == [({"k2": "A", "double": 4}, ("in1",))]


def test_event_time_survives_a_map_that_passes_it_through(run_diagram):
    text = DOC % (
        "when: t, v: v",
        "a: {type: aggregate, in: m, window: {size: 10s}, aggregates: {n: sum(v)}}",
        "a",
    )
    assert validate(load_document(text)).boxes[1].schema.event_time == "when"
    out = run_diagram(
        text, {"in1": [{"t": at(1), "k": "a", "v": 2}, {"t": at(2), "k": "b", "v": 3}]}
    )["out"]
    assert [(r["window_start"], r["n"], s) for r, s in out] == [(at(0), 5, ("in1",))]


def test_a_computed_time_is_not_an_event_time():
    schema = validate(load_document(DOC % ("t2: t + INTERVAL 1 SECOND", "", "m"))).outputs["out"]
    assert schema.event_time is None
