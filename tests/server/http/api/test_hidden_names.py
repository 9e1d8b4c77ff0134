"""Names reveal nothing hidden (issue 42, finding 5), on a live server.

ann's diagram ``q1`` and its output ``a_out`` are hidden from ben. ben's create of a diagram
named ``q1`` with an output ``a_out`` answers exactly as his create of names nobody uses, and
both then run side by side: each owner sees, deploys, stops and reads the history of its own,
and each ``a_out`` gets its own diagram's results, live and from its log, under that name.
joe, who sees both, is told the name is ambiguous for him (docs/architecture.md).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from serverkit import PASSWORD, Client, wait_until

EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)


def doc(name: str, output: str, where: str) -> dict:
    return {
        "version": 1,
        "name": name,
        "inputs": {"ticks": {}},
        "boxes": {"f": {"type": "filter", "in": "ticks", "where": where}},
        "outputs": {output: {"from": "f"}},
    }


def price(second: int, value: float) -> dict:
    return {"time": (EPOCH + timedelta(seconds=second)).isoformat(), "symbol": "X", "price": value}


def _setup(joe: Client) -> None:
    for role, user in (("TEAM_A", "ann"), ("TEAM_B", "ben")):
        joe.call("POST", "/roles", 201, json={"name": role})
        joe.call("POST", "/users", 201, json={"name": user, "password": PASSWORD, "roles": [role]})
    fields = {"time": "timestamp", "symbol": "string", "price": "double"}
    joe.call("POST", "/schemas", 201, json={"name": "s", "fields": fields, "event_time": "time"})
    joe.call("POST", "/streams", 201, json={"name": "ticks", "schema": "s"})
    for role in ("TEAM_A", "TEAM_B"):
        grants = [("schema", "s", "VIEW_OBJECT"), ("system", "system", "ADD")]
        grants += [("stream", "ticks", a) for a in ("VIEW_OBJECT", "READ_TUPLE", "WRITE")]
        grants += [("box_type", "filter", "USE")]
        for type_, name, action in grants:
            joe.call("PUT", f"/permissions/{type_}/{name}/{role}/{action}")


def _answer(created: dict, name: str, output: str) -> str:
    """A create's answer with what differs between two creates (ids, times) left out and the
    diagram's and output's names written as ``NAME`` and ``OUT``."""
    text = json.dumps(created, sort_keys=True)
    for key in ("id", "created_at", "saved_at"):
        text = json.dumps(_without(json.loads(text), key), sort_keys=True)
    return text.replace(output, "OUT").replace(name, "NAME")


def _without(value, key: str):
    if isinstance(value, dict):
        return {k: _without(v, key) for k, v in value.items() if k != key}
    if isinstance(value, list):
        return [_without(v, key) for v in value]
    return value


def test_a_diagram_named_like_a_hidden_one_is_answered_as_a_free_name_and_both_run(live):
    joe = Client(live.url, "joe", PASSWORD)
    _setup(joe)
    ann, ben = Client(live.url, "ann", PASSWORD), Client(live.url, "ben", PASSWORD)
    ann.call("POST", "/diagrams", 201, json={"document": doc("q1", "a_out", "price > 0")})
    ann.call("POST", "/diagrams/q1/deploy", timeout=180)
    ben.call("GET", "/diagrams/q1", 404)  # hidden from ben

    free = ben.call("POST", "/diagrams", 201, json={"document": doc("q9", "q9_out", "price < 0")})
    taken = ben.call("POST", "/diagrams", 201, json={"document": doc("q1", "a_out", "price < 0")})
    assert _answer(taken, "q1", "a_out") == _answer(free, "q9", "q9_out")
    ben.call("POST", "/diagrams/q1/deploy", timeout=180)

    for client, where in ((ann, "price > 0"), (ben, "price < 0")):
        mine = client.call("GET", "/diagrams/q1")
        assert mine["document"]["boxes"]["f"]["where"] == where
        assert mine["status"] == "running"
        (version,) = client.call("GET", "/diagrams/q1/versions")["versions"]
        assert (
            client.call("GET", f"/diagrams/q1/versions/{version['version']}")["document"]
            == (mine["document"])
        )
    assert joe.call("GET", "/diagrams/q1", 409)["error"]["code"] == "NAME_AMBIGUOUS"
    for client in (ann, ben):
        client.connect()
        assert client.emit("subscribe", {"output": "a_out"}) == {"subscribed": "a_out"}

    ben.call("POST", "/streams/ticks/tuples", json=[price(1, 5.0), price(2, -5.0)])

    def results(client: Client, output: str) -> list[float]:
        return [
            t["price"] for t in client.call("GET", f"/outputs/{output}/results?from=0")["tuples"]
        ]

    wait_until(lambda: ann.received and ben.received, 180, "both outputs' tuples")
    assert [t["price"] for t in ann.received] == [5.0] == results(ann, "a_out")
    assert [t["price"] for t in ben.received] == [-5.0] == results(ben, "a_out")
    assert ann.outputs == ben.outputs == ["a_out"]
    assert ben.call("GET", "/outputs/a_out")["owner"]["role"] == "TEAM_B"
    progress = ben.call("GET", "/diagrams/q1/status")["progress"]
    assert set(progress["outputs"]) == {"a_out"} and "a_out" in progress["boxes"]

    ben.call("POST", "/diagrams/q1/stop")
    assert ben.call("GET", "/diagrams/q1")["status"] == "stopped"
    assert ann.call("GET", "/diagrams/q1")["status"] == "running"
    ben.call("DELETE", "/diagrams/q1", 204)
    assert ann.call("GET", "/diagrams/q1")["status"] == "running"
    for client in (joe, ann, ben):
        client.close()
