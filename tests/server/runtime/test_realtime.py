"""Real-time mode against the real runtime, Spark and server (issue 41): status says how each
output runs and why; a real-time output logs its rows, then delivers what rights allow."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from runtime_helpers import TRADE, Collector, plan_of, union_doc
from serverkit import PASSWORD, POSITIVE, Client, wait_until

from server.ingest.segments import list_segments, scan, segment_path
from server.runtime.checkpoints import DiagramDir
from server.runtime.modes import MICRO_BATCH, NOT_ENABLED, REAL_TIME
from server.runtime.realtime import read_of
from server.runtime.versions import fingerprint

TUPLE = {"time": "2026-01-01T00:00:00", "symbol": "s0", "price": 1.0}


def test_a_diagram_asking_for_real_time_mode_where_it_is_off_runs_in_micro_batches(
    make_runtime,
):
    runtime = make_runtime(realtime_slots=0)
    runtime.create_stream("rt_off", TRADE)
    got = Collector()
    runtime.deploy(
        "asks", plan_of({**union_doc("asks", ["rt_off"], "price > 0"), "realtime": True}), got
    )
    runtime.append("rt_off", [TUPLE])
    assert [r["symbol"] for r in got.wait_for_rows(1)] == ["s0"]
    shown = runtime.status("asks")["outputs"]["asks_out"]
    assert (shown["mode"], shown["mode_reason"]) == (MICRO_BATCH, NOT_ENABLED)
    runtime.stop("asks")


def test_a_real_time_output_logs_each_group_with_how_far_it_read_then_hands_it_on(make_runtime):
    runtime = make_runtime(realtime_slots=1)
    runtime.create_stream("rt_in", TRADE)
    got = Collector()
    plan = plan_of({**union_doc("fast", ["rt_in"], "price > 0"), "realtime": True})
    runtime.deploy("fast", plan, got)
    try:
        shown = runtime.status("fast")["outputs"]["fast_out"]
        assert (shown["mode"], shown["mode_reason"]) == (REAL_TIME, "1 of 1 real-time slots")
        runtime.append("rt_in", [TUPLE, {**TUPLE, "symbol": "s1", "price": -1.0}])
        runtime.append("rt_in", [{**TUPLE, "symbol": "s2"}])
        rows = got.wait_for_rows(2)
        assert [(r["symbol"], r["_label"], r["time"]) for r in rows] == [
            ("s0", 1, datetime(2026, 1, 1, tzinfo=timezone.utc)),
            ("s2", 1, datetime(2026, 1, 1, tzinfo=timezone.utc)),
        ]
        logged = runtime.results("fast_out", 0, 10)
        assert [r["symbol"] for t in logged.tables for r in t.to_pylist()] == ["s0", "s2"]
        # each row is named by its input's row number: s2 is the stream's third row (2)
        logs = Path(DiagramDir(runtime.data_dir / "diagrams", "fast", fingerprint(plan)).path)
        (directory,) = logs.glob("outputs/fast_out/results")
        *_, (last, _) = scan(segment_path(directory, list_segments(directory)[-1]))
        assert read_of(last.payload) == {"rt_in": 2}
    finally:
        runtime.stop("fast")


# Spark's shortest batch, so the epoch whose progress carries the box counts ends soon.
@pytest.mark.parametrize(
    "live", [{"realtime_slots": 1, "realtime_batch_seconds": 5}], indirect=True
)
def test_a_real_time_output_withholds_the_next_tuple_once_read_tuple_is_revoked(live):
    joe = Client(live.url, "joe", PASSWORD)
    joe.call("POST", "/roles", 201, json={"name": "R1"})
    joe.call("POST", "/users", 201, json={"name": "u1", "password": PASSWORD, "roles": ["R1"]})
    joe.call("POST", "/schemas", 201, json={"name": "s", "fields": {"x": "long"}})
    joe.call("POST", "/streams", 201, json={"name": "in1", "schema": "s"})
    joe.call("POST", "/diagrams", 201, json={"document": {**POSITIVE, "realtime": True}})
    joe.call("POST", "/diagrams/q/deploy")
    try:
        shown = joe.call("GET", "/diagrams/q/status")["progress"]["outputs"]["out"]
        assert (shown["mode"], shown["mode_reason"]) == (REAL_TIME, "1 of 1 real-time slots")
        for action in ("VIEW_OBJECT", "SUBSCRIBE"):
            joe.call("PUT", f"/permissions/output/out/R1/{action}")
        read = "/permissions/stream/in1/R1/READ_TUPLE"
        joe.call("PUT", read)
        u1 = Client(live.url, "u1", PASSWORD)
        u1.connect()
        assert u1.emit("subscribe", {"output": "out"}) == {"subscribed": "out"}
        joe.connect()
        assert joe.emit("subscribe", {"output": "out"}) == {"subscribed": "out"}

        def send(x: int, to: Client) -> None:
            joe.call("POST", "/streams/in1/tuples", json=[{"x": x}])
            wait_until(lambda: x in [t["x"] for t in to.received], 120, f"x={x} on the socket")

        send(1, u1)
        joe.call("DELETE", read)
        send(2, joe)  # delivered to joe, who owns in1; u1 may no longer read it
        joe.call("PUT", read)
        send(3, u1)
        assert [t["x"] for t in u1.received] == [1, 3]

        # box counts and the backlog come with each epoch's progress, once the epoch ends (its
        # batch duration); a real-time offset is a position and the rows read past it
        def counted() -> dict:
            boxes = joe.call("GET", "/diagrams/q/status")["progress"]["boxes"]
            return {name: boxes[name]["rows_out"] for name in ("in1", "kept", "out")}

        wait_until(lambda: counted() == dict.fromkeys(("in1", "kept", "out"), 3), 60, "counts")
        progress = joe.call("GET", "/diagrams/q/status")["progress"]
        assert progress["backlog"] == {"in1": 0}
        assert progress["outputs"]["out"]["rows_waiting"] == 0
        u1.close()
        joe.close()
    finally:
        joe.call("POST", "/diagrams/q/stop")  # its real-time query holds one of two cores
