"""The real-time receiver's exactly once, without Spark (issue 41): rows are known by their
input's position, so a replay is skipped whatever epoch brings it, across a restart too."""

from __future__ import annotations

import logging
import socket

import pyarrow as pa
from runtime_helpers import read_results
from serverkit import wait_until

from server.runtime.outputs import OutputSink
from server.runtime.realtime import RealTimeOutput, Receiver

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


def test_a_writer_that_leaves_mid_epoch_is_no_error_and_its_rows_are_kept(tmp_path, caplog):
    """A real-time query that stops cancels its task, whose connection ends before the epoch:
    that is no fault to log as one (it was, with a traceback, at every stop); the rows that
    came are logged, and a replay of them is skipped."""
    sink = OutputSink("o", tmp_path / "results", recent_rows=10, retain_rows=100)
    receiver = Receiver()
    receiver.register("q/o", RealTimeOutput(sink, SCHEMA))
    host, port = receiver.address.split(":")
    try:
        with caplog.at_level(logging.INFO, logger="server.runtime.realtime"):
            with socket.create_connection((host, int(port))) as writer:
                writer.sendall(b'{"output": "q/o"}\n' + b"\n".join(rows("a", 0, 1)) + b"\n")
                wait_until(lambda: sink.end() == 2, 10, "the rows taken")
            wait_until(lambda: "left mid-epoch" in caplog.text, 10, "the writer's leaving")
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
    finally:
        receiver.close()
        sink.close()
    logged = [r["v"] for _, table in read_results(tmp_path / "results") for r in table.to_pylist()]
    assert logged == [0, 1]
