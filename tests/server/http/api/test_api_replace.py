"""Replacing a diagram (PUT /diagrams/NAME) is all or nothing: a failure, wherever it happens,
leaves the old version in place, running if it ran, with its grants and its name."""

from __future__ import annotations

from serverkit import POSITIVE, Q1, subscribed_to_positive, wait_until

from catalog import repository

API = "/api/v1"
INVALID = {**POSITIVE, "boxes": {"kept": {**POSITIVE["boxes"]["kept"], "where": "nowhere > 0"}}}


def test_a_failure_between_removing_and_adding_keeps_the_old_version(client, auth, monkeypatch):
    def fail(*_):
        raise OSError("disk full")  # after the old version's rows are deleted

    monkeypatch.setattr(repository, "insert_members", fail)
    doc = {**Q1, "boxes": {**Q1["boxes"], "avg": {**Q1["boxes"]["avg"], "group_by": []}}}
    failed = client.put(f"{API}/diagrams/q1", json={"document": doc}, headers=auth.headers("al"))
    assert failed.status_code == 500
    monkeypatch.undo()
    assert client.get(f"{API}/diagrams/q1", headers=auth.headers("al")).json["document"] == Q1
    assert client.get(f"{API}/outputs/out1", headers=auth.headers("ed")).status_code == 200
    again = {"version": 1, "name": "q1", "inputs": {"in1": {}}, "outputs": {"o": {"from": "in1"}}}
    taken = client.post(f"{API}/diagrams", json={"document": again}, headers=auth.headers("al"))
    assert taken.json["error"]["code"] == "DUPLICATE_NAME"


def test_a_replace_that_fails_validation_leaves_the_old_diagram_running(live):
    joe = subscribed_to_positive(live.url)

    refused = joe.call("PUT", "/diagrams/q", 400, json={"document": INVALID})
    assert refused["error"]["code"] == "DIAGRAM_INVALID"
    status = joe.call("GET", "/diagrams/q/status")
    assert status["status"] == "running" and status["progress"]["state"] == "running"
    joe.call("POST", "/streams/in1/tuples", json=[{"x": 0}, {"x": 7}])
    wait_until(lambda: joe.received, 120, "a result from the old version")
    assert [t["x"] for t in joe.received] == [7]

    joe.call("POST", "/diagrams/q/stop")
    joe.call("PUT", "/diagrams/q", 400, json={"document": INVALID})
    assert joe.call("GET", "/diagrams/q")["document"] == POSITIVE
    assert joe.call("POST", "/diagrams/q/deploy")["status"] == "running"
    joe.close()
