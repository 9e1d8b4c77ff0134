"""Ceilings on what one diagram may cost (issue 12, operator-based access control): a diagram
whose estimated cost is over them is refused before Spark sees it, at validation, creation,
update and deployment, with the parameter and the limit named, and nothing is stored or started.

The attack: an aggregate with a one-hour window sliding by a millisecond (3.6 million windows
per tuple) was accepted, and deploying it ran Spark out of memory for minutes."""

from __future__ import annotations

import copy

from serverkit import PASSWORD, Q1, Client

API = "/api/v1"
GREEDY = copy.deepcopy(Q1)
GREEDY["name"] = "greedy"
GREEDY["boxes"]["avg"]["window"] = {"size": "1h", "slide": "1ms"}
GREEDY["outputs"] = {"greedy_out": {"from": "avg"}}  # output names are unique system-wide
OVER = [
    {
        "code": "COST_LIMIT_EXCEEDED",
        "path": "boxes.avg.window",
        "message": "windows_per_tuple is 3600000; the limit is 1000",
    },
    {  # each group key holds as many windows open at once
        "code": "COST_LIMIT_EXCEEDED",
        "path": "boxes",
        "message": "open_windows is 3600000; the limit is 100000",
    },
]


def test_a_window_in_millions_of_windows_per_tuple_is_refused_and_not_stored(client, auth):
    joe = auth.headers("joe")
    made = client.post(f"{API}/diagrams", json={"document": GREEDY}, headers=joe)
    assert made.status_code == 400
    assert made.json["error"]["code"] == "DIAGRAM_INVALID"
    assert made.json["error"]["details"]["problems"] == OVER
    assert client.get(f"{API}/diagrams/greedy", headers=joe).status_code == 404
    checked = client.post(f"{API}/diagrams/validate", json={"document": GREEDY}, headers=joe)
    assert checked.json == {"valid": False, "problems": OVER}
    replaced = client.put(
        f"{API}/diagrams/q1",
        json={"document": {**Q1, "boxes": GREEDY["boxes"]}},
        headers=auth.headers("al"),
    )
    assert replaced.json["error"]["details"]["problems"] == OVER
    assert client.get(f"{API}/diagrams/q1", headers=joe).json["document"] == Q1


def test_an_administrator_changes_a_ceiling_while_the_server_runs(client, auth):
    joe = auth.headers("joe")
    raised = client.patch(
        f"{API}/system/settings",
        json={"max_windows_per_tuple": 4_000_000, "max_open_windows": 10_000_000},
        headers=joe,
    )
    assert raised.status_code == 200, raised.json
    made = client.post(f"{API}/diagrams", json={"document": GREEDY}, headers=joe)
    assert made.status_code == 201, made.json


def test_a_stored_diagram_over_a_lowered_ceiling_is_not_deployed(live):
    joe = Client(live.url, "joe", PASSWORD)
    joe.call(
        "POST",
        "/schemas",
        201,
        json={"name": "s", "fields": {"time": "timestamp", "x": "long"}, "event_time": "time"},
    )
    joe.call("POST", "/streams", 201, json={"name": "in1", "schema": "s"})
    doc = {
        "version": 1,
        "name": "sliding",
        "inputs": {"in1": {}},
        "boxes": {
            "a": {
                "type": "aggregate",
                "in": "in1",
                "window": {"size": "10s", "slide": "1s"},
                "aggregates": {"n": "count()"},
            }
        },
        "outputs": {"out": {"from": "a"}},
    }
    joe.call("POST", "/diagrams", 201, json={"document": doc})
    joe.call("PATCH", "/system/settings", json={"max_windows_per_tuple": 5})
    refused = joe.call("POST", "/diagrams/sliding/deploy", 400)
    assert refused["error"]["details"]["problems"] == [
        {
            "code": "COST_LIMIT_EXCEEDED",
            "path": "boxes.a.window",
            "message": "windows_per_tuple is 10; the limit is 5",
        }
    ]
    status = joe.call("GET", "/diagrams/sliding/status")
    assert status["status"] == "stopped" and status["progress"]["state"] == "stopped"
    joe.call("PATCH", "/system/settings", json={"max_windows_per_tuple": None})
    assert joe.call("POST", "/diagrams/sliding/deploy")["status"] == "running"
    joe.call("POST", "/diagrams/sliding/stop")
    joe.close()
