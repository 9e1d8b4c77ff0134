"""A diagram's history over REST: one version per create and replacement, readable by whoever
may view the diagram, gone with the diagram (a later diagram of the same name starts afresh)."""

from __future__ import annotations

import pytest
from serverkit import Q1

import catalog.objects

API = "/api/v1"


def filtered(where: str) -> dict:
    return {
        "version": 1,
        "name": "hist",
        "inputs": {"feed": {}},
        "boxes": {"f": {"type": "filter", "in": "feed", "where": where}},
        "outputs": {"hist_out": {"from": "f"}},
    }


def history(client, auth, user="al", name="hist"):
    return client.get(f"{API}/diagrams/{name}/versions", headers=auth.headers(user))


def test_every_save_is_a_version_and_each_opens_as_it_was_saved(client, auth):
    al = auth.headers("al")
    assert (
        client.post(f"{API}/diagrams", json={"document": filtered("x > 1")}, headers=al).status_code
        == 201
    )
    for where in ("x > 2", "x > 3"):
        put = client.put(f"{API}/diagrams/hist", json={"document": filtered(where)}, headers=al)
        assert put.status_code == 200, put.json
    listed = history(client, auth).json["versions"]
    assert [v["version"] for v in listed] == [3, 2, 1]
    assert {(v["saved_by"], v["saved_role"]) for v in listed} == {("al", "CUSTOMER1")}
    assert listed[0]["saved_at"] >= listed[1]["saved_at"] >= listed[2]["saved_at"]
    for number, where in ((1, "x > 1"), (2, "x > 2"), (3, "x > 3")):
        one = client.get(f"{API}/diagrams/hist/versions/{number}", headers=al).json
        assert one["version"] == number
        assert one["document"] == filtered(where)
    current = client.get(f"{API}/diagrams/hist", headers=al).json["document"]
    assert current == filtered("x > 3")


def test_a_refused_replacement_leaves_no_version(client, auth):
    al = auth.headers("al")
    client.post(f"{API}/diagrams", json={"document": filtered("x > 1")}, headers=al)
    bad = client.put(f"{API}/diagrams/hist", json={"document": filtered("nope > 1")}, headers=al)
    assert bad.status_code == 400
    clash = {**filtered("x > 2"), "outputs": {"out1": {"from": "f"}}}  # q1's output name
    taken = client.put(f"{API}/diagrams/hist", json={"document": clash}, headers=al)
    assert taken.json["error"]["code"] == "DUPLICATE_NAME"
    assert [v["version"] for v in history(client, auth).json["versions"]] == [1]


def test_history_is_seen_only_by_who_may_view_the_diagram(client, auth):
    """ed was granted VIEW_OBJECT on al's q1; bob holds nothing: 404, as if it did not exist."""
    assert [v["version"] for v in history(client, auth, "ed", "q1").json["versions"]] == [1]
    assert (
        client.get(f"{API}/diagrams/q1/versions/1", headers=auth.headers("ed")).json["document"]
        == Q1
    )
    for path in ("q1/versions", "q1/versions/1"):
        hidden = client.get(f"{API}/diagrams/{path}", headers=auth.headers("bob"))
        missing = client.get(f"{API}/diagrams/nowhere/{path[3:]}", headers=auth.headers("bob"))
        assert hidden.status_code == missing.status_code == 404
        assert hidden.json["error"]["code"] == missing.json["error"]["code"] == "NOT_FOUND"


@pytest.mark.parametrize("number", ["2", "-1", "x"])
def test_a_version_that_does_not_exist_is_not_found(client, auth, number):
    answer = client.get(f"{API}/diagrams/q1/versions/{number}", headers=auth.headers("al"))
    assert answer.status_code == 404 and answer.json["error"]["code"] == "NOT_FOUND"


@pytest.mark.parametrize("number", ["0", "99999999999", "99999999999999999999999"])
def test_a_version_number_out_of_range_is_named(client, auth, number):
    """Beyond SQLite's integers it used to reach the database and fail with a 500."""
    answer = client.get(f"{API}/diagrams/q1/versions/{number}", headers=auth.headers("al"))
    assert answer.status_code == 400, answer.json
    assert answer.json["error"]["code"] == "INVALID_PARAMETER"
    assert answer.json["error"]["details"] == {"parameter": "version"}


def test_dropping_a_diagram_drops_its_history(client, auth):
    al, ed = auth.headers("al"), auth.headers("ed")
    client.post(f"{API}/diagrams", json={"document": filtered("x > 1")}, headers=al)
    client.put(f"{API}/diagrams/hist", json={"document": filtered("x > 2")}, headers=al)
    assert client.delete(f"{API}/diagrams/hist", headers=al).status_code == 204
    assert history(client, auth).status_code == 404
    # A later diagram of that name, by someone else, does not inherit al's versions.
    again = client.post(f"{API}/diagrams", json={"document": filtered("x > 9")}, headers=ed)
    assert again.status_code == 201, again.json
    listed = history(client, auth, "ed").json["versions"]
    assert [(v["version"], v["saved_by"]) for v in listed] == [(1, "ed")]


def test_only_the_newest_versions_are_kept(client, auth, monkeypatch):
    monkeypatch.setattr(catalog.objects, "MAX_VERSIONS", 2)
    al = auth.headers("al")
    client.post(f"{API}/diagrams", json={"document": filtered("x > 1")}, headers=al)
    for n in (2, 3, 4):
        client.put(f"{API}/diagrams/hist", json={"document": filtered(f"x > {n}")}, headers=al)
    assert [v["version"] for v in history(client, auth).json["versions"]] == [4, 3]
    gone = client.get(f"{API}/diagrams/hist/versions/2", headers=al)
    assert gone.status_code == 404
