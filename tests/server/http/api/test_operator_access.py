"""Operator-based access control over the REST API on a real catalog file: the 1h/1ms attack
is refused before deploy with its code and nothing stored; a role without USE on a box type
cannot add a diagram using it; administrators set role limits."""

from __future__ import annotations

from tests.server.http.api.test_api import API, Q1

ATTACK = {
    **Q1,
    "name": "q9",
    "boxes": {
        **Q1["boxes"],
        "avg": {**Q1["boxes"]["avg"], "window": {"size": "1h", "slide": "1ms"}},
    },
}


def test_the_1h_1ms_window_is_refused_and_nothing_is_stored(client, auth):
    answer = client.post(f"{API}/diagrams", json={"document": ATTACK}, headers=auth.headers("al"))
    assert answer.status_code == 400
    problem = answer.json["error"]["details"]["problems"][0]
    assert problem["code"] == "COST_LIMIT_EXCEEDED" and "3600000" in problem["message"]
    missing = client.get(f"{API}/diagrams/q9", headers=auth.headers("al"))
    assert missing.status_code == 404


def test_without_use_on_a_box_type_a_diagram_using_it_is_refused(client, auth):
    revoked = client.delete(
        f"{API}/permissions/box_type/aggregate/CUSTOMER1/USE", headers=auth.headers("joe")
    )
    assert revoked.status_code in (200, 204), revoked.json
    answer = client.post(
        f"{API}/diagrams", json={"document": {**Q1, "name": "q9"}}, headers=auth.headers("al")
    )
    assert answer.status_code == 403 and answer.json["error"]["code"] == "BOX_TYPE_NOT_ALLOWED"
    assert client.get(f"{API}/diagrams/q9", headers=auth.headers("al")).status_code == 404


def test_administrators_set_role_limits_and_they_bite(client, auth):
    url = f"{API}/roles/CUSTOMER1/limits"
    assert (
        client.patch(url, json={"window_seconds": 1}, headers=auth.headers("al")).status_code == 403
    )
    changed = client.patch(url, json={"window_seconds": 5}, headers=auth.headers("joe"))
    assert changed.status_code == 200 and changed.json["limits"] == {"window_seconds": 5}
    assert (
        client.get(url, headers=auth.headers("joe")).json["ceilings"]["windows_per_tuple"] == 1000
    )
    answer = client.post(
        f"{API}/diagrams", json={"document": {**Q1, "name": "q9"}}, headers=auth.headers("al")
    )
    assert answer.status_code == 403
    assert "the limit of role CUSTOMER1 is 5" in answer.json["error"]["message"]
