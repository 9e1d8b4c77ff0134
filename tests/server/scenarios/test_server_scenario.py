"""The Borealis paper's scenario (section 4.1), end to end, against a live server with real
HTTP and socket.io clients and the real Spark runtime: Joe administers, Ed sends New York and
London prices, Al runs q1 (union -> aggregate), Bob sees only what his permissions allow."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from serverkit import PASSWORD, Q1, Client, wait_until

EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)


def at(seconds: int) -> str:
    return (EPOCH + timedelta(seconds=seconds)).isoformat()


def prices(ed: Client, start: int) -> None:
    """One window of prices from t=start: IBM in New York (in1, a JSON array), BP in London
    (in2, NDJSON), XOM in both; then a tuple on each stream at start+25 over the socket's
    ``ingest`` event, which closes the windows before it."""
    new_york = [
        {"time": at(start + 1), "symbol": "IBM", "price": 100.0},
        {"time": at(start + 2), "symbol": "XOM", "price": 50.0},
    ]
    london = [
        {"time": at(start + 3), "symbol": "BP", "price": 10.0},
        {"time": at(start + 4), "symbol": "XOM", "price": 52.0},
    ]
    assert ed.call("POST", "/streams/in1/tuples", json=new_york)["count"] == 2
    ndjson = "\n".join(json.dumps(t) for t in london)
    assert (
        ed.call(
            "POST",
            "/streams/in2/tuples",
            data=ndjson,
            headers={"Content-Type": "application/x-ndjson"},
        )["count"]
        == 2
    )
    ed.emit(
        "ingest",
        {"stream": "in1", "tuples": [{"time": at(start + 25), "symbol": "IBM", "price": 101.0}]},
    )
    ed.emit(
        "ingest",
        {"stream": "in2", "tuples": [{"time": at(start + 25), "symbol": "BP", "price": 11.0}]},
    )


def window(client: Client, start: int) -> dict[str, list[str]]:
    """What ``client`` received for the window starting at ``start``: symbol -> sources."""
    return {t["symbol"]: t["_sources"] for t in client.received if t["window_start"] == at(start)}


def test_the_papers_scenario(live):
    joe = Client(live.url, "joe", PASSWORD)
    for role in ("INFO_PROVIDER", "CUSTOMER1", "CUSTOMER2"):
        joe.call("POST", "/roles", 201, json={"name": role})
    for user, role in (("ed", "INFO_PROVIDER"), ("al", "CUSTOMER1"), ("bob", "CUSTOMER2")):
        joe.call("POST", "/users", 201, json={"name": user, "password": PASSWORD, "roles": [role]})
    # Figure 8: Joe adds s, in1, in2 and grants them to CUSTOMER1 and INFO_PROVIDER.
    joe.call(
        "POST",
        "/schemas",
        201,
        json={
            "name": "s",
            "event_time": "time",
            "fields": {"time": "timestamp", "symbol": "string", "price": "double"},
        },
    )
    for stream in ("in1", "in2"):
        joe.call("POST", "/streams", 201, json={"name": stream, "schema": "s"})
    grants = [("schema", "s", role, "VIEW_OBJECT") for role in ("CUSTOMER1", "INFO_PROVIDER")]
    for stream in ("in1", "in2"):
        grants += [("stream", stream, "CUSTOMER1", a) for a in ("VIEW_OBJECT", "READ_TUPLE")]
        grants += [("stream", stream, "INFO_PROVIDER", a) for a in ("VIEW_OBJECT", "WRITE")]
    grants.append(("system", "system", "CUSTOMER1", "ADD"))
    # operator-based access control (the paper's future work): q1 unions and aggregates
    grants += [("box_type", t, "CUSTOMER1", "USE") for t in ("union", "aggregate")]
    for type_, name, role, action in grants:
        joe.call("PUT", f"/permissions/{type_}/{name}/{role}/{action}")

    ed = Client(live.url, "ed", PASSWORD)
    assert [o["name"] for o in ed.call("GET", "/catalog")["objects"]] == ["s", "in1", "in2"]
    ed.connect()

    # Figure 9: Al inserts q1, deploys it and subscribes to out1.
    al = Client(live.url, "al", PASSWORD)
    assert [o["name"] for o in al.call("GET", "/catalog")["objects"]] == ["s", "in1", "in2"]
    al.call("POST", "/diagrams", 201, json={"document": Q1})
    al.call("POST", "/diagrams/q1/deploy")
    al.connect()
    assert al.emit("subscribe", {"output": "out1"}) == {"subscribed": "out1"}
    prices(ed, 0)
    wait_until(lambda: len(window(al, 0)) == 3, 120, "Al's first window")
    assert window(al, 0) == {"IBM": ["in1"], "BP": ["in2"], "XOM": ["in1", "in2"]}

    # Figure 10: Bob sees nothing, until Joe grants s and in1 and Al grants out1.
    bob = Client(live.url, "bob", PASSWORD)
    assert bob.call("GET", "/catalog")["objects"] == []
    bob.connect()
    assert bob.emit("subscribe", {"output": "out1"})["error"]["code"] == "NOT_FOUND"
    joe.call("PUT", "/permissions/schema/s/CUSTOMER2/VIEW_OBJECT")
    for action in ("VIEW_OBJECT", "READ_TUPLE"):
        joe.call("PUT", f"/permissions/stream/in1/CUSTOMER2/{action}")
    for action in ("VIEW_OBJECT", "SUBSCRIBE"):
        al.call("PUT", f"/permissions/output/out1/CUSTOMER2/{action}")
    assert [o["name"] for o in bob.call("GET", "/catalog")["objects"]] == ["s", "in1", "out1"]
    assert bob.emit("subscribe", {"output": "out1"}) == {"subscribed": "out1"}
    prices(ed, 30)
    wait_until(lambda: len(window(al, 30)) == 3, 120, "Al's second window")
    wait_until(lambda: window(bob, 30), 60, "Bob's window")
    assert window(bob, 30) == {"IBM": ["in1"]}
    assert all(t["_sources"] == ["in1"] for t in bob.received)

    # Joe revokes in1 from CUSTOMER2: Bob gets nothing more, and is told he reads none of
    # out1's inputs now (before any batch: nothing about the rows withheld); Al keeps receiving.
    told: list[dict] = []
    bob.sock.on("sources_changed", told.append)
    joe.call("DELETE", "/permissions/stream/in1/CUSTOMER2/READ_TUPLE")
    seen_by_bob = len(bob.received)
    wait_until(lambda: told, 30, "Bob told what he reads now")
    assert told == [{"output": "out1", "sources": [], "aggregated": []}]
    prices(ed, 60)
    prices(ed, 90)
    wait_until(lambda: len(window(al, 90)) == 3, 120, "Al's windows after the revocation")
    assert window(al, 60) == {"IBM": ["in1"], "BP": ["in2"], "XOM": ["in1", "in2"]}
    assert len(bob.received) == seen_by_bob

    # Reading out1's result log from the start (what a client that lost its connection does):
    # Al gets everything he was sent live, in order; Bob, revoked, gets nothing, old or new.
    wait_until(lambda: len(al.positions) == len(set(al.positions)) > 0, 10, "positions")
    assert al.positions == sorted(al.positions)
    read = al.call("GET", "/outputs/out1/results?from=0")
    assert read["from"] == 0 and read["oldest"] == 0 and read["next"] == al.positions[-1]
    assert read["tuples"] == al.received
    assert bob.call("GET", "/outputs/out1/results?from=0")["tuples"] == []
    rest = al.call("GET", f"/outputs/out1/results?from={read['next']}")
    assert rest["tuples"] == [] and rest["next"] == read["next"]
    paged = al.call("GET", "/outputs/out1/results?from=2&limit=1")
    assert paged["tuples"] == al.received[2 : paged["next"]] and paged["next"] > 2

    # Al's second socket subscribes from the start: the log's results, then live ones, each once.
    phone = Client(live.url, "al", PASSWORD)
    phone.connect()
    beyond = phone.emit("subscribe", {"output": "out1", "from": read["next"] + 1})
    assert beyond["error"]["code"] == "RESULTS_BEYOND_END"  # not accepted, then silent
    assert f"its newest position is {read['next']}" in beyond["error"]["message"]
    assert phone.emit("subscribe", {"output": "out1", "from": 0}) == {
        "subscribed": "out1",
        "replayed_to": al.positions[-1],
    }
    assert phone.received == al.received
    prices(ed, 120)
    wait_until(lambda: len(window(al, 120)) == 3, 120, "Al's window after the replay")
    wait_until(lambda: len(phone.received) == len(al.received), 60, "the phone's live window")
    assert phone.received == al.received
    # Al's two sockets are one audience, Bob's another: each batch is filtered and sent twice.
    out1 = al.call("GET", "/diagrams/q1/status")["progress"]["outputs"]["out1"]
    assert (out1["audiences"], out1["sockets"]) == (2, 3)
    for client in (ed, al, bob, phone):
        client.close()
