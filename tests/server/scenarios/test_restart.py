"""``sluice serve --demo`` in a real process, killed mid-stream and started again: the demo
comes up with live results, q1 and a count window resume from their checkpoints, Al's socket
reconnects and carries on from its last position, and every tuple the server acknowledged is
counted in q1's results exactly once; Al received every result exactly once, in order, across
the kill."""

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


# A count window: its state lives in Python on the executors, written to the checkpoint.
COUNT_WINDOW = (
    "CREATE DIAGRAM qc;\n"
    "INSERT INTO oc SELECT symbol, count(*) AS n FROM in1 [PARTITION BY symbol ROWS 5]"
    " GROUP BY symbol"
)


def result_rows(user: Client, output: str) -> int:
    """The position after ``output``'s last logged result (while under 10,000 rows); 0 while
    its diagram is being restarted (on a loaded machine Spark's Python workers may fail to
    connect back, and the runtime restarts the diagram from its checkpoint)."""
    answer = user.http.get(f"{user.base}/api/v1/outputs/{output}/results?from=0&limit=10000")
    if answer.status_code == 404 and answer.json()["error"]["code"] == "NOT_FOUND":
        return 0
    assert answer.status_code == 200, answer.text
    return answer.json()["next"]


def counted(al: Client) -> int:
    """ACK tuples counted in q1's results, from the socket and the recent-results cache."""
    windows = {t["window_start"]: t["n"] for t in al.received if t["symbol"] == "ACK"}
    for t in al.call("GET", "/outputs/out1/recent")["tuples"]:
        if t["symbol"] == "ACK":
            windows[t["window_start"]] = t["n"]
    return sum(windows.values())


def demo_state(al: Client, server) -> str:
    """What a wait for q1's results needs to explain itself: q1's state and its last batch,
    what out1's result log holds and how it is labelled, what Al's socket was answered and
    received, and the end of the server's log."""
    status = al.http.get(f"{al.base}/api/v1/diagrams/q1/status").json()
    progress = status.get("progress") or {}
    logged = al.http.get(f"{al.base}/api/v1/outputs/out1/results?from=0&limit=10000").json()
    tuples = logged.get("tuples", [])
    labels = sorted({tuple(t["_sources"]) for t in tuples})
    windows = sorted({t["window_start"] for t in tuples})[-3:]
    received = sorted({tuple(t["_sources"]) for t in al.received})
    return (
        f"q1: {status.get('status')}, {progress.get('state')}, restarts "
        f"{progress.get('restarts')}, error {progress.get('error')}, outputs "
        f"{json.dumps(progress.get('outputs'))[:2000]}\n"
        f"out1's log: {len(tuples)} rows labelled {labels}, last windows {windows}\n"
        f"Al's socket: connected {al.sock.connected}, {al.connects} connects, acks {al.acks}, "
        f"{len(al.received)} tuples labelled {received}\n"
        f"server log:\n{server.log_path.read_text()[-3000:]}"
    )


def test_restart_mid_stream(serve, standalone):
    """On a standalone cluster whose executors get Sluice's code only as the archive the server
    ships (their Python lacks it). A local server killed mid-stream is the derived kill test's
    and the crash tests' (one server start less here: each costs about a minute in CI)."""
    server = serve(demo=True, **standalone.settings())
    server.start()
    logins = json.loads((server.data / "demo_logins.json").read_text())
    al = Client(server.url, "al", logins["al"])
    al.connect(resubscribe=["out1"], resume=True)
    wait_until(
        lambda: al.acks, 60, "the answer to Al's subscription", lambda: demo_state(al, server)
    )
    assert al.acks == [{"subscribed": "out1"}]
    wait_until(
        lambda: any(t["_sources"] == ["in1", "in2"] for t in al.received),
        120,
        "live demo results labelled {in1, in2}",
        lambda: demo_state(al, server),
    )
    assert {tuple(t["_sources"]) for t in al.received} <= {("in1",), ("in2",), ("in1", "in2")}

    al.call("POST", "/diagrams", json={"cql": COUNT_WINDOW}, expect=201)
    al.call("POST", "/diagrams/qc/deploy", timeout=180)  # the server gives up after 120 s
    wait_until(lambda: result_rows(al, "oc") > 0, 120, "count-window results")

    ed = Client(server.url, "ed", logins["ed"])
    acked = send_acked(ed, 20)
    server.kill()
    before = len(al.received)
    server.start()
    assert al.call("GET", "/diagrams/q1/status")["status"] == "running"
    windowed = result_rows(al, "oc")
    wait_until(
        lambda: result_rows(al, "oc") > windowed, 120, "count-window results after the restart"
    )
    acked += send_acked(ed, 20)
    wait_until(lambda: counted(al) >= acked, 120, "every acknowledged tuple in the results")
    assert counted(al) == acked
    wait_until(lambda: len(al.received) > before, 120, "results on the reconnected socket")
    al.close()
    # What Al received over both lives of the server is the result log up to his last position:
    # nothing missing, nothing twice, in order.
    logged, at = [], 0
    while at < al.positions[-1]:
        read = al.call("GET", f"/outputs/out1/results?from={at}&limit={al.positions[-1] - at}")
        logged += read["tuples"]
        at = read["next"]
    assert al.received == logged
