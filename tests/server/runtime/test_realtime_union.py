"""A real-time union of several streams (issue 41): read by one source in one task slot, its
offset counts each stream's rows handed on past it (``RealTimeLogStream.java``), so a range
read again after one stream grew names the same rows."""

from __future__ import annotations

import json
import time

from runtime_helpers import TRADE, Collector, plan_of, union_doc, wait_until

from boxes.arrowipc import ipc_bytes
from boxes.input import InputBox
from server.runtime import checkpoints, heads
from server.runtime.checkpoints import DiagramDir, committed_offsets
from server.runtime.modes import REAL_TIME
from server.runtime.versions import fingerprint

BATCH = 5.0  # seconds: the shortest real-time batch (RuntimeSettings.realtime_batch_seconds)


def row(symbol: str) -> dict:
    return {"time": "2026-01-01T00:00:00", "symbol": symbol, "price": 1.0}


def test_a_union_of_three_streams_runs_in_real_time_on_one_slot(make_runtime):
    runtime = make_runtime(realtime_slots=1, realtime_batch_seconds=BATCH)
    streams = ["u1", "u2", "u3"]
    for name in streams:
        runtime.create_stream(name, TRADE)
    plan = plan_of({**union_doc("three", streams), "realtime": True})
    bits = {b.name: 1 << b.bit for b in plan.boxes if isinstance(b, InputBox)}
    got = Collector()
    runtime.deploy("three", plan, got)
    try:
        shown = runtime.status("three")["outputs"]["three_out"]
        assert (shown["mode"], shown["mode_reason"]) == (REAL_TIME, "1 of 1 real-time slots")
        for n, name in enumerate(streams):
            runtime.append(name, [row(f"{name}.{i}") for i in range(n + 1)])
        rows = got.wait_for_rows(6)
        wanted = {
            (f"{name}.{i}", bits[name]) for n, name in enumerate(streams) for i in range(n + 1)
        }
        assert sorted((r["symbol"], r["_label"]) for r in rows) == sorted(wanted)
    finally:
        runtime.stop("three")


def test_a_range_read_again_after_a_stream_grew_hands_on_each_row_once(make_runtime, monkeypatch):
    """The output restarts behind its streams (a0 of ``ra``; b0, b1 of ``rb``) and its first two
    reads are slower than a batch, so each of those epochs hands on one row and ends in the
    middle of the range: a0, then b0. Before the third read, ``ra`` grows (a1), so the range
    read again from the same offset holds a0, a1, b0, b1. One count of rows over all streams
    (2) skipped a0 and a1: a1 was lost. A count per stream skips a0 and b0."""
    reads: list[list[str]] = []  # each read's rows

    def slowed(table):
        # its rows but marks (no symbol) and start (read again if its range was not used up)
        reads.append(
            sorted(s for s in table.column("symbol").to_pylist() if s not in (None, "start"))
        )
        if len(reads) == 2:
            runtime.append("ra", [row("a1")])
        if len(reads) <= 2:
            time.sleep(BATCH + 1)  # a read slower than the batch: its epoch ends after one row
        return ipc_bytes(table)

    runtime = make_runtime(realtime_slots=1, realtime_batch_seconds=BATCH)
    for name in ("ra", "rb"):
        runtime.create_stream(name, TRADE)
    plan = plan_of({**union_doc("again", ["ra", "rb"]), "realtime": True})
    got = Collector()
    runtime.deploy("again", plan, got)
    runtime.append("ra", [row("start")])
    directory = DiagramDir(runtime.data_dir / "diagrams", "again", fingerprint(plan))
    checkpoint = directory.checkpoint("again_out")
    # start committed: the first slow epoch after the restart hands on a0, not start again
    wait_until(lambda: (committed_offsets(checkpoint) or {}).get("ra", 0) >= 1)
    runtime.stop("again")
    runtime.append("ra", [row("a0")])
    runtime.append("rb", [row("b0"), row("b1")])
    monkeypatch.setattr(heads, "ipc_bytes", slowed)
    runtime.deploy("again", plan, got)  # from its checkpoint: three rows behind
    try:
        wait_until(lambda: "b1" in [r["symbol"] for r in got.rows], what="b1 delivered")
        assert sorted(r["symbol"] for r in got.rows) == ["a0", "a1", "b0", "b1", "start"]
        assert reads[:3] == [["a0", "b0", "b1"]] * 2 + [["a0", "a1", "b0", "b1"]]
    finally:
        runtime.stop("again")


def test_a_real_time_checkpoint_from_before_union_sources_goes_on_as_it_was(
    make_runtime, monkeypatch
):
    """A real-time union deployed before its streams were one source has a checkpoint of a
    source per stream, whose offsets count rows with a number (``"skip": n``): Spark refuses it
    with another number of sources, so it keeps a source per stream, and reads the numbers."""
    runtime = make_runtime(realtime_slots=2, realtime_batch_seconds=BATCH)
    for name in ("oa", "ob"):
        runtime.create_stream(name, TRADE)
    plan = plan_of({**union_doc("old", ["oa", "ob"]), "realtime": True})
    checkpoint = DiagramDir(runtime.data_dir / "diagrams", "old", fingerprint(plan)).checkpoint(
        "old_out"
    )
    got = Collector()
    with monkeypatch.context() as before:
        before.setattr(checkpoints, "settle_union_source", lambda checkpoint: False)
        runtime.deploy("old", plan, got)
        runtime.append("oa", [row("a0")])
        runtime.append("ob", [row("b0")])
        wait_until(lambda: (committed_offsets(checkpoint) or {}) == {"oa": 1, "ob": 1})
        runtime.stop("old")
    offsets = checkpoint.child("offsets")
    for batch in filter(str.isdigit, offsets.names()):  # as the reader logged them then
        lines = offsets.child(batch).read_text().splitlines()
        olden = [{**o, "skip": sum(o["skip"].values())} for o in map(json.loads, lines[2:])]
        offsets.child(batch).put("\n".join(lines[:2] + [json.dumps(o) for o in olden]).encode())
        offsets.child(f".{batch}.crc").delete()  # Hadoop's checksum of the file as it was
    runtime.deploy("old", plan, got)
    try:
        runtime.append("oa", [row("a1")])
        runtime.append("ob", [row("b1")])
        got.wait_for_rows(4)
        assert sorted(r["symbol"] for r in got.rows) == ["a0", "a1", "b0", "b1"]
        assert not checkpoint.child(checkpoints.UNION_SOURCE_FILE).exists()
    finally:
        runtime.stop("old")
