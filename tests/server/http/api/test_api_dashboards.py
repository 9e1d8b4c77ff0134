"""The dashboards API on the real app: each user's own, checked panels, limits that answer
with their codes, and nothing of another user's reachable or revealed."""

from __future__ import annotations

import pytest

API = "/api/v1/dashboards"
TABLE = {"output": "out1", "view": "table"}
CHART = {"output": "out1", "view": "chart", "options": {"field": "avg_price", "split": "symbol"}}
MAP = {"output": "ships", "view": "map", "options": {"colour": "_sources"}}


def test_a_user_saves_several_dashboards_and_reads_them_back(client, auth):
    al = auth.headers("al")
    for name, panels in (("main", [TABLE, CHART]), ("ships", [MAP]), ("main", [CHART])):
        saved = client.put(f"{API}/{name}", json={"panels": panels}, headers=al)
        assert saved.status_code == 200 and saved.json["panels"] == panels
    listed = client.get(API, headers=al).json["dashboards"]
    assert [(d["name"], d["panels"]) for d in listed] == [("main", [CHART]), ("ships", [MAP])]
    assert client.get(f"{API}/ships", headers=al).json["panels"] == [MAP]
    assert client.delete(f"{API}/ships", headers=al).status_code == 204
    assert [d["name"] for d in client.get(API, headers=al).json["dashboards"]] == ["main"]


def test_another_users_dashboard_answers_as_a_missing_one(client, auth):
    """ed has ``main`` (the world's); to al, and to joe the administrator, it is not there."""
    for user in ("al", "joe"):
        headers = auth.headers(user)
        theirs = client.get(f"{API}/main", headers=headers)
        missing = client.get(f"{API}/nothing", headers=headers)
        assert theirs.status_code == missing.status_code == 404
        assert theirs.json["error"]["message"] == "no dashboard named 'main'"
        assert client.delete(f"{API}/main", headers=headers).status_code == 404
        assert client.get(API, headers=headers).json == {"dashboards": []}
    assert client.get(f"{API}/main", headers=auth.headers("ed")).json["panels"] == [TABLE]


@pytest.mark.parametrize(
    "body, path",
    [
        ({"panels": [{"output": "out1", "view": "pie"}]}, "panels.0.view"),
        ({"panels": [{"output": "<img src=x>", "view": "table"}]}, "panels.0.output"),
        ({"panels": [{"view": "table"}]}, "panels.0"),
        ({"panels": [{**TABLE, "owner": "joe"}]}, "panels.0"),
        ({"panels": [{**TABLE, "options": {"field": "x" * 65}}]}, "panels.0.options.field"),
        ({"panels": [{**TABLE, "options": {"field": {"deep": 1}}}]}, "panels.0.options.field"),
        ({"panels": [{**TABLE, "options": {"field": "<b>x</b>"}}]}, "panels.0.options.field"),
        ({"panels": [TABLE] * 13}, "panels"),
        ({}, ""),
    ],
)
def test_a_bad_dashboard_is_refused_with_the_path_of_each_problem(client, auth, body, path):
    answer = client.put(f"{API}/main", json=body, headers=auth.headers("al"))
    assert answer.status_code == 400
    assert path in [p["path"] for p in answer.json["error"]["details"]["problems"]]
    assert client.get(API, headers=auth.headers("al")).json == {"dashboards": []}


def test_the_largest_dashboard_the_schema_allows_is_stored(client, auth):
    options = {f"o{'_' * 30}{letter}": "f" * 64 for letter in "abcdefgh"}
    panels = [{"output": "o" * 64, "view": "chart", "options": options}] * 12
    saved = client.put(f"{API}/main", json={"panels": panels}, headers=auth.headers("al"))
    assert saved.status_code == 200 and saved.json["panels"] == panels


def test_a_bad_name_and_one_dashboard_too_many_answer_their_codes(client, auth):
    al = auth.headers("al")
    bad = client.put(f"{API}/no%20good", json={"panels": []}, headers=al)
    assert bad.status_code == 400 and bad.json["error"]["code"] == "INVALID_PARAMETER"
    for n in range(20):
        assert client.put(f"{API}/d{n}", json={"panels": []}, headers=al).status_code == 200
    over = client.put(f"{API}/d20", json={"panels": []}, headers=al)
    assert over.status_code == 409 and over.json["error"]["code"] == "TOO_MANY_DASHBOARDS"


def test_a_new_user_of_a_deleted_users_name_inherits_none_of_its_dashboards(client, auth):
    ed = auth.headers("ed")
    assert client.delete("/api/v1/users/ed", headers=auth.headers("joe")).status_code == 204
    assert client.get(f"{API}/main", headers=ed).status_code == 401
    made = client.post(
        "/api/v1/users",
        json={"name": "ed", "password": "another password", "roles": ["CUSTOMER1"]},
        headers=auth.headers("joe"),
    )
    assert made.status_code == 201
    auth.passwords["ed"], auth.tokens = "another password", {}
    assert client.get(API, headers=auth.headers("ed")).json == {"dashboards": []}
