"""Two ``sluice serve`` processes on one PostgreSQL catalog, one Redis and one shared runtime
directory (docs/deploy.md "The runtime lease", "Results on any server"): the first runs the
runtime, the second waits as a standby; subscribers on the second receive the first's results,
filtered by the second's view of the permissions, so a revoke made through the first stops
them at the next batch; a socket on the second ingests, and resumes from a result-log
position, through the first; killed, the first's runtime is taken over by the second, which resumes
the diagram from its checkpoint with every tuple the first acknowledged in its results exactly
once."""

from __future__ import annotations

import pytest
from serverkit import Client, Server, wait_until

# Two `sluice serve` processes (Spark in the first, then in the second), which no fixture tells.
pytestmark = [pytest.mark.spark, pytest.mark.slow]
PASSWORD = "correct horse battery"
LEASE_SECONDS = 3
READER = "READER"
DIAGRAM = {
    "version": 1,
    "name": "q",
    "inputs": {"in1": {}},
    "boxes": {"positive": {"type": "filter", "in": "in1", "where": "price > 0"}},
    "outputs": {"out": {"from": "positive"}},
}


def results(user: Client) -> list[dict] | None:
    """``out``'s logged results through ``user``'s server; None while it cannot read them."""
    answer = user.http.get(f"{user.base}/api/v1/outputs/out/results?from=0&limit=10000")
    return answer.json()["tuples"] if answer.ok else None


def send(user: Client, first: int, count: int) -> list[float]:
    """Send ``count`` tuples, one request each, prices ``first`` on: those acknowledged (each
    answer says the tuple is durable in the runtime holder's log)."""
    acked = []
    for price in range(first, first + count):
        tuple_ = {"symbol": "S", "price": float(price)}
        assert user.call("POST", "/streams/in1/tuples", json=[tuple_])["count"] == 1
        acked.append(float(price))
    return acked


def emit(user: Client, first: int, count: int) -> list[float]:
    """Send ``count`` tuples in one socket.io ``ingest``, prices ``first`` on: those acked."""
    tuples = [{"symbol": "S", "price": float(p)} for p in range(first, first + count)]
    ack = user.emit("ingest", {"stream": "in1", "tuples": tuples})
    assert ack["stream"] == "in1" and ack["count"] == count and ack["first_seq"] >= 0, ack
    return [t["price"] for t in tuples]


def prices(tuples: list[dict]) -> list[float]:
    return [t["price"] for t in tuples]


def seen(user: Client) -> set[float]:
    return {t["price"] for t in list(user.received)}


def reader_on(admin: Client, server: Client) -> Client:
    """ann, whose role may read ``out`` and in1's tuples, subscribed on ``server``."""
    admin.call("POST", "/roles", 201, json={"name": READER})
    user = {"name": "ann", "password": PASSWORD, "roles": [READER]}
    admin.call("POST", "/users", 201, json=user)
    for action in ("VIEW_OBJECT", "SUBSCRIBE"):
        admin.call("PUT", f"/permissions/output/out/{READER}/{action}")
    admin.call("PUT", f"/permissions/stream/in1/{READER}/READ_TUPLE")
    ann = Client(server.base, "ann", PASSWORD)
    ann.connect(resubscribe=["out"])
    return ann


def test_results_reach_a_standbys_subscribers_and_the_standby_takes_the_runtime_over(
    tmp_path, postgres, redis_url
):
    settings = {
        "catalog_url": postgres.blank(),
        "redis_url": redis_url,
        "runtime_dir": str(tmp_path / "shared-runtime"),
        "runtime_lease_seconds": LEASE_SECONDS,
        "secret_key": "s" * 48,
        "admin_user": "joe",
        "admin_password": PASSWORD,
    }
    servers = []
    try:
        for name in ("a", "b"):
            (tmp_path / name).mkdir()
            servers.append(Server(tmp_path / name, **settings))
            servers[-1].start()  # one after the other: the first takes the lease
        a, b = (Client(s.url, "joe", PASSWORD) for s in servers)

        status = b.call("GET", "/system/status")
        assert status["runtime"] is None  # the standby started no Spark
        assert status["lease"]["this_server"] is False
        assert a.call("GET", "/system/status")["lease"]["this_server"] is True

        fields = {"symbol": "string", "price": "double"}
        b.call("POST", "/schemas", 201, json={"name": "trade", "fields": fields})  # catalog only
        stream = {"name": "in1", "schema": "trade"}
        # a stream needs a log in the holder's runtime: the standby refuses, and adds nothing
        assert (
            b.call("POST", "/streams", 503, json=stream)["error"]["code"] == "RUNTIME_UNAVAILABLE"
        )
        a.call("POST", "/streams", 201, json=stream)
        a.call("POST", "/diagrams", 201, json={"document": DIAGRAM})
        a.call("POST", "/diagrams/q/deploy")

        ann = reader_on(a, b)
        watcher = Client(b.base, "joe", PASSWORD)  # an administrator reads everything
        watcher.connect(resubscribe=["out"])
        acked = send(a, 1, 10) + send(b, 11, 5)  # B passes its appends on to A
        once = {"X-Sluice-Forwarded": "1"}  # as if another server had passed it on already
        again = b.http.post(
            f"{b.base}/api/v1/streams/in1/tuples", json=[{"price": 9.5}], headers=once
        )
        assert again.status_code == 503, again.text  # not passed on twice: refused, not looped
        wait_until(lambda: len(results(a) or []) >= 5, 120, "the first results on A")
        wait_until(lambda: ann.received, 60, "A's results to reach ann's socket on B")

        # a socket on B ingests: B passes it on to A, acks with A's acknowledgement
        acked += emit(watcher, 20, 2)
        wait_until(lambda: seen(watcher) >= {20.0, 21.0}, 60, "B's socket's tuples on B")
        wait_until(lambda: len(results(a)) >= len(acked), 60, "every result so far on A")
        # a socket on B resumes from position 5: the rows of A's log from there, then live ones
        late = Client(b.base, "joe", PASSWORD)
        late.connect()
        ack = late.emit("subscribe", {"output": "out", "from": 5})
        assert ack == {"subscribed": "out", "replayed_to": ack["replayed_to"]}, ack
        assert ack["replayed_to"] >= len(acked)
        acked += emit(late, 30, 3)
        wait_until(lambda: len(late.received) >= len(acked) - 5, 60, "the live rows on B")
        assert prices(late.received) == prices(results(a)[5:])  # in order, none twice or missed
        late.close()

        a.call("DELETE", f"/permissions/stream/in1/{READER}/READ_TUPLE")  # through A
        revoked = send(a, 200, 5)
        wait_until(lambda: seen(watcher) >= set(revoked), 60, "the revoked batches on B")
        assert seen(ann) <= set(acked)  # only from before the revoke, none made up
        assert not seen(ann) & set(revoked)
        # a read of the result log through B is the holder's answer, with ann's rights of now
        wait_until(lambda: len(results(a)) >= 20, 60, "every result on A")
        assert results(b) == results(a)
        mine = ann.call("GET", "/outputs/out/results?from=0")["tuples"]
        assert mine == [] and ann.call("GET", "/outputs/out/recent")["tuples"] == []
        acked += revoked
        servers[0].kill()  # mid-stream: no clean hand-over, the lease runs out

        def taken_over() -> bool:
            lease = b.call("GET", "/system/status")["lease"]
            return lease is not None and lease["this_server"]

        wait_until(taken_over, 60, "B to take the runtime lease over")
        wait_until(lambda: results(b) is not None, 180, "B to resume the diagram")
        acked += send(b, 100, 5)  # and B ingests now
        wait_until(lambda: len(results(b)) >= len(acked), 120, "every acknowledged tuple on B")
        got = sorted(t["price"] for t in results(b))
        assert got == sorted(acked)  # each exactly once, across the kill
        # the watcher's socket on B stayed open: after the take-over B delivers locally
        wait_until(lambda: seen(watcher) >= set(acked[-5:]), 60, "B's own results on B")
        assert seen(watcher) <= set(acked)
        ann.close()
        watcher.close()
        assert b.call("GET", "/system/status")["runtime"] is not None
    finally:
        for server in servers:
            if server.running():
                server.kill()
