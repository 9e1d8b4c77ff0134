"""The real-time receiver's exactly once, without Spark (issue 41): rows are known by their
input's position, so a replay is skipped whatever epoch brings it, across a restart too."""

from __future__ import annotations

import pyarrow as pa
from runtime_helpers import read_results

from server.runtime.outputs import OutputSink
from server.runtime.realtime import RealTimeOutput

SCHEMA = pa.schema([("v", pa.int64())])


def rows(stream: str, *seqs: int) -> list[bytes]:
    """Rows as ``RowSender`` sends them, each valued by its input's row number."""
    return [f'{stream}\t{seq}\t{{"v": {seq}}}'.encode() for seq in seqs]


def test_rows_come_again_under_a_later_epoch_after_a_restart_and_are_logged_once(tmp_path):
    sink = OutputSink("o", tmp_path / "results", recent_rows=10, retain_rows=100)
    output = RealTimeOutput(sink, SCHEMA)
    output.take(rows("a", 0, 2, 3))  # the rows between were filtered out
    output.take(rows("b", 0))
    output.take(rows("a", 5))  # then the runtime is killed mid-epoch
    sink.close()
    sink = OutputSink("o", tmp_path / "results", recent_rows=10, retain_rows=100)
    output = RealTimeOutput(sink, SCHEMA)
    output.take(rows("a", 0))  # the epoch again from its start: its time is up after a row
    output.take(rows("a", 2, 3, 5, 6))  # the next epoch, from where that one ended
    output.take(rows("b", 0, 1))
    sink.close()
    logged = [r["v"] for _, table in read_results(tmp_path / "results") for r in table.to_pylist()]
    assert logged == [0, 2, 3, 0, 5, 6, 1]
