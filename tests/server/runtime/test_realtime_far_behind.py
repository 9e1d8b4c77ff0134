"""A real-time output that starts far behind its stream (issue 41): its task reads the range
in chunks and hands each on as it comes, so an epoch that runs out of time ends where its rows
did and the next goes on from there (``RealTimeLogStream.java``). Read whole, a range of tens
of thousands of rows took longer than the batch, and each epoch handed on one row."""

from __future__ import annotations

from runtime_helpers import TRADE, Collector, plan_of, union_doc

from boxes.arrowipc import ipc_bytes
from server.runtime import heads

TUPLE = {"time": "2026-01-01T00:00:00", "symbol": "s0", "price": 1.0}
BEHIND = 1500  # one-row frames: more than one chunk (1,000 rows, RealTimeLogStream.CHUNK_ROWS)


def test_a_real_time_output_far_behind_reads_its_range_in_chunks(make_runtime, monkeypatch):
    chunks: list[int] = []  # the rows of each read the head service answered with rows

    def counted(table):
        chunks.append(table.num_rows)
        return ipc_bytes(table)

    monkeypatch.setattr(heads, "ipc_bytes", counted)
    runtime = make_runtime(realtime_slots=1)
    runtime.create_stream("behind", TRADE)
    plan = plan_of({**union_doc("far", ["behind"], "price > 0"), "realtime": True})
    got = Collector()
    runtime.deploy("far", plan, got)
    runtime.append("behind", [TUPLE])
    got.wait_for_rows(1)
    runtime.stop("far")
    for i in range(1, BEHIND + 1):
        runtime.append("behind", [{**TUPLE, "symbol": f"s{i}"}])
    chunks.clear()
    runtime.deploy("far", plan, got)  # from its checkpoint: 1,500 rows behind
    try:
        rows = got.wait_for_rows(BEHIND + 1)
        assert [r["symbol"] for r in rows] == [f"s{i}" for i in range(BEHIND + 1)]
        assert max(chunks) == 1000  # never the whole range at once
    finally:
        runtime.stop("far")
