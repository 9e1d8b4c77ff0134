"""Borealis' other label semantics end to end on a live server (real Spark, HTTP and socket.io).

al owns a diagram over in1 and in2: their union averaged per 10 s window (no group: the
averages reveal no tuple, so they are aggregate-only), the same averages on an output al
declared weak, and a filter over in2. bob may READ_TUPLE in1 and only READ_AGGREGATE in2; cy
may READ_TUPLE in1 only. bob receives the averages but no tuple of the filter; cy receives the
averages only on the weak output. bob cannot make an output weak (al's diagram is not his), and
once the administrator revokes bob's READ_AGGREGATE the next average is withheld from him. The
result log read over REST (``GET /outputs/NAME/results``) answers the same as live delivery.
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone

from peekworld import setup_readers
from serverkit import PASSWORD, Client, wait_until

EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)
SEM = {
    "version": 1,
    "name": "sem",
    "inputs": {"in1": {}, "in2": {}},
    "boxes": {
        "merged": {"type": "union", "in": ["in1", "in2"]},
        "avg": {
            "type": "aggregate",
            "in": "merged",
            "window": {"size": "10s"},
            "aggregates": {"avg_price": "avg(price)", "n": "count()"},
        },
        "cheap": {"type": "filter", "in": "in2", "where": "price < 1000"},
    },
    "outputs": {
        "averages": {"from": "avg"},
        "averages_weak": {"from": "avg", "semantic": "weak"},
        "cheap2": {"from": "cheap"},
    },
}
OUTPUTS = tuple(SEM["outputs"])


def price(second: int, value: float) -> list[dict]:
    return [
        {"time": (EPOCH + timedelta(seconds=second)).isoformat(), "symbol": "X", "price": value}
    ]


class Subscriber(Client):
    """A client that remembers which output each received tuple came from."""

    def _tuples(self, data) -> None:
        super()._tuples(data)
        for row in self.received[len(self.received) - len(data["tuples"]) :]:
            row["output"] = data["output"]


def results(client: Client, output: str) -> list[dict]:
    return client.call("GET", f"/outputs/{output}/results?from=0")["tuples"]


def on(client: Client, output: str) -> list[dict]:
    return [t for t in client.received if t["output"] == output]


def _setup(joe: Client) -> None:
    """bob may READ_TUPLE in1 and only READ_AGGREGATE in2, and build a filter; cy (ONE) may
    READ_TUPLE in1."""
    setup_readers(
        joe,
        "ONE",
        [
            ("system", "system", "READER", "ADD"),
            ("box_type", "filter", "READER", "USE"),
            ("stream", "in1", "READER", "READ_TUPLE"),
            ("stream", "in2", "READER", "READ_AGGREGATE"),
            ("stream", "in2", "READER", "VIEW_OBJECT"),
            ("stream", "in1", "ONE", "READ_TUPLE"),
        ],
    )


def test_weak_outputs_and_aggregate_reads_on_a_live_server(live):
    joe = Client(live.url, "joe", PASSWORD)
    _setup(joe)
    al = Subscriber(live.url, "al", PASSWORD)
    al.call("POST", "/diagrams", 201, json={"document": SEM})
    for output in OUTPUTS:
        for role in ("READER", "ONE"):
            for action in ("VIEW_OBJECT", "SUBSCRIBE"):
                al.call("PUT", f"/permissions/output/{output}/{role}/{action}")
    al.call("PUT", "/permissions/diagram/sem/READER/VIEW_OBJECT")  # bob sees it, cannot change it
    al.call("POST", "/diagrams/sem/deploy")
    assert al.call("GET", "/outputs/averages_weak")["semantic"] == "weak"
    assert al.call("GET", "/outputs/averages")["semantic"] == "strong"

    # Only the output's owner chooses the weak semantic: bob may neither replace al's diagram
    # nor declare a weak output over a stream whose tuples he may not read.
    weak = copy.deepcopy(SEM)
    weak["outputs"]["cheap2"]["semantic"] = "weak"
    bob = Subscriber(live.url, "bob", PASSWORD)
    refused = bob.call("PUT", "/diagrams/sem", 403, json={"document": weak})
    assert refused["error"]["code"] == "PERMISSION_DENIED"
    own = {
        "version": 1,
        "name": "mine",
        "inputs": {"in2": {}},
        "boxes": {"f": {"type": "filter", "in": "in2", "where": "price > 0"}},
        "outputs": {"mine": {"from": "f", "semantic": "weak"}},
    }
    bob.call("POST", "/diagrams", 403, json={"document": own})
    assert al.call("GET", "/outputs/cheap2")["semantic"] == "strong"

    cy = Subscriber(live.url, "cy", PASSWORD)
    for client in (al, bob, cy):
        client.connect()
        for output in OUTPUTS:
            assert client.emit("subscribe", {"output": output}) == {"subscribed": output}
    ed = Client(live.url, "ed", PASSWORD)
    # Window [0s, 10s): 10 from in1 and 30 from in2; the tuples at 15 s close it.
    for second, p1, p2 in ((1, 10.0, 30.0), (15, 50.0, 70.0)):
        ed.call("POST", "/streams/in1/tuples", json=price(second, p1))
        ed.call("POST", "/streams/in2/tuples", json=price(second, p2))
    wait_until(lambda: len(on(al, "cheap2")) == 2, 120, "the owner's filtered tuples")
    for client in (al, bob, cy):
        wait_until(lambda c=client: on(c, "averages_weak"), 120, f"{client.user}'s weak average")
    wait_until(lambda: on(al, "averages") and on(bob, "averages"), 120, "the strong averages")
    first = {"avg_price": 20.0, "n": 2, "_sources": ["in1", "in2"]}
    assert [{k: t[k] for k in first} for t in on(bob, "averages")] == [first]
    assert [{k: t[k] for k in first} for t in on(cy, "averages_weak")] == [first]
    assert on(cy, "averages") == [] and on(bob, "cheap2") == []
    # REST reads of the result logs answer as live delivery did
    assert [t["avg_price"] for t in results(bob, "averages")] == [20.0]
    assert results(bob, "cheap2") == [] and len(results(al, "cheap2")) == 2
    assert results(cy, "averages") == [] and len(results(cy, "averages_weak")) == 1
    for client in (al, bob, cy):
        for row in results(client, "averages"):
            assert "_raw" not in row and "_label" not in row

    # The administrator revokes bob's READ_AGGREGATE on in2: the next average is withheld.
    joe.call("DELETE", "/permissions/stream/in2/READER/READ_AGGREGATE")
    seen = len(on(bob, "averages"))
    for stream, p in (("in1", 90.0), ("in2", 110.0)):
        ed.call("POST", f"/streams/{stream}/tuples", json=price(25, p))  # closes [10s, 20s)
    wait_until(lambda: len(on(al, "averages")) == 2, 120, "the owner's second average")
    wait_until(lambda: len(on(cy, "averages_weak")) == 2, 120, "cy's second weak average")
    assert len(on(bob, "averages")) == seen
    assert [t["avg_price"] for t in results(bob, "averages")] == []
    for client in (joe, al, bob, cy, ed):
        client.close()
