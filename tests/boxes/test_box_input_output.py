"""The input and output boxes: schema columns in order, the stream's bit, the watermark."""

from __future__ import annotations

import pytest

from boxes.compiler import compile_plan
from boxes.document import load_document, validate
from boxes.errors import InvalidInput
from tests.boxes.conftest import at, collect

DOC = """
version: 1
name: io
inputs:
  zeta: {schema: {fields: {t: timestamp, v: long}, event_time: t}, lateness: 2500ms}
  alpha: {schema: {fields: {v: long, w: string}}}
outputs:
  z: {from: zeta}
  a: {from: alpha}
"""


def test_bits_follow_sorted_input_names_and_outputs_keep_schema_order(spark):
    plan = validate(load_document(DOC))
    assert plan.inputs == ("alpha", "zeta")
    alpha = spark.createDataFrame([("x", 7, "extra")], "w string, v long, junk string")
    zeta = spark.createDataFrame([(at(1), 1)], "t timestamp, v long")
    outs = compile_plan(plan, {"alpha": alpha, "zeta": zeta})
    assert outs["a"].columns == ["v", "w", "_label"]
    assert [row["_label"] for row in outs["a"].collect()] == [1]
    assert [row["_label"] for row in outs["z"].collect()] == [2]
    assert collect(plan, outs["a"]) == [({"v": 7, "w": "x"}, ("alpha",))]


def test_a_streaming_input_is_watermarked_by_its_lateness(spark, stream_files):
    plan = validate(load_document(DOC))
    assert plan.input_lateness == {"alpha": 0.0, "zeta": 2.5}
    outs = compile_plan(plan, stream_files.frames(spark, plan))
    assert outs["z"].isStreaming
    plan_text = outs["z"]._jdf.queryExecution().analyzed().toString()
    assert "EventTimeWatermark" in plan_text and "2.5 seconds" in plan_text
    assert "EventTimeWatermark" not in outs["a"]._jdf.queryExecution().analyzed().toString()


@pytest.mark.parametrize(
    "given", [["zeta"], ["zeta", "alpha"]], ids=["missing frame", "missing columns"]
)
def test_missing_input_frames_or_columns_are_refused(spark, given):
    plan = validate(load_document(DOC))
    zeta = spark.createDataFrame([(at(1), 1)], "t timestamp, v long")
    with pytest.raises(InvalidInput) as err:
        compile_plan(plan, {name: zeta for name in given})
    assert err.value.code == "INPUT_MISMATCH"
