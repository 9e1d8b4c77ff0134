"""``sluice serve --demo`` in a real process, killed mid-stream and started again: the demo
comes up with live results, q1 resumes from its checkpoint, Al's socket reconnects and carries
on from its last position, and every tuple the server acknowledged is counted in q1's results
exactly once; Al received every result exactly once, in order, across the kill."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from serverkit import Client, wait_until


def send_acked(ed: Client, count: int) -> int:
    """Send ``count`` ACK tuples on in1, one request each; return how many were acknowledged."""
    acked = 0
    for _ in range(count):
        now = datetime.now(timezone.utc).isoformat()
        ack = ed.call(
            "POST", "/streams/in1/tuples", json=[{"time": now, "symbol": "ACK", "price": 1.0}]
        )
        acked += ack["count"]
    return acked


def counted(al: Client) -> int:
    """ACK tuples counted in q1's results, from the socket and the recent-results cache."""
    windows = {t["window_start"]: t["n"] for t in al.received if t["symbol"] == "ACK"}
    for t in al.call("GET", "/outputs/out1/recent")["tuples"]:
        if t["symbol"] == "ACK":
            windows[t["window_start"]] = t["n"]
    return sum(windows.values())


def test_restart_mid_stream(serve):
    server = serve(demo=True, spark_master="local[2]")
    server.start()
    logins = json.loads((server.data / "demo_logins.json").read_text())
    al = Client(server.url, "al", logins["al"])
    al.connect(resubscribe=["out1"], resume=True)
    wait_until(
        lambda: any(t["_sources"] == ["in1", "in2"] for t in al.received),
        120,
        "live demo results labelled {in1, in2}",
    )
    assert {tuple(t["_sources"]) for t in al.received} <= {("in1",), ("in2",), ("in1", "in2")}

    ed = Client(server.url, "ed", logins["ed"])
    acked = send_acked(ed, 20)
    server.kill()
    before = len(al.received)
    server.start()
    assert al.call("GET", "/diagrams/q1/status")["status"] == "running"
    acked += send_acked(ed, 20)
    wait_until(lambda: counted(al) >= acked, 120, "every acknowledged tuple in the results")
    assert counted(al) == acked
    wait_until(lambda: len(al.received) > before, 60, "results on the reconnected socket")
    al.close()
    # What Al received over both lives of the server is the result log up to his last position:
    # nothing missing, nothing twice, in order.
    logged, at = [], 0
    while at < al.positions[-1]:
        read = al.call("GET", f"/outputs/out1/results?from={at}&limit={al.positions[-1] - at}")
        logged += read["tuples"]
        at = read["next"]
    assert al.received == logged
