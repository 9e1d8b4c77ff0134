"""Values through the real-time path (issue 41): the text a real-time query writes
(``realtime.query_frame``, Spark's ``to_json``) read back by the receiver as the output's
Arrow schema has them, NaN and infinities included."""

from __future__ import annotations

import math

from runtime_helpers import read_results

from server.runtime.outputs import OutputSink
from server.runtime.realtime import TEXT_COLUMN, RealTimeOutput, arrow_schema, query_frame

VALUES = [float("nan"), float("inf"), float("-inf"), -0.0, 1e-300, 0.1, 1.7976931348623157e308]


def test_floating_point_values_reach_the_result_log_as_the_query_computed_them(spark, tmp_path):
    frame = spark.createDataFrame(
        [(k, v, v, f"s{k}") for k, v in enumerate(VALUES)] + [(99, None, None, None)],
        "k long, d double, f float, s string",
    )
    texts = [row[TEXT_COLUMN] for row in query_frame(frame).collect()]
    lines = [f"in\t{seq}\t{text}".encode() for seq, text in enumerate(texts)]
    sink = OutputSink("o", tmp_path / "results", recent_rows=10, retain_rows=100)
    RealTimeOutput(sink, arrow_schema(frame)).take(lines)
    sink.close()
    (logged,) = [table for _, table in read_results(tmp_path / "results")]
    expected = frame.toArrow()
    assert logged.schema.field("d").type == expected.schema.field("d").type
    for column in ("d", "f"):
        got, want = logged.column(column).to_pylist(), expected.column(column).to_pylist()
        assert [str(v) for v in got] == [str(v) for v in want], column
        assert math.copysign(1, got[3]) == -1  # -0.0 keeps its sign
    assert logged.column("s").to_pylist() == expected.column("s").to_pylist()
