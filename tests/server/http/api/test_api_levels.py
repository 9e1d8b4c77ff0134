"""The levels administration over REST: administrators only, answers as declared, errors coded."""

from __future__ import annotations

import pytest

API = "/api/v1/levels"


def _set_up(client, headers):
    steps = [
        ("put", f"{API}/streams/in1", {"company": "A"}, 200),
        ("put", f"{API}/streams/in2", {"multilevel": True}, 200),
        ("put", f"{API}/roles/CUSTOMER1", {"clearance": {"banks": "A"}}, 200),
        ("put", f"{API}/users/ed", {"organisation": "B"}, 200),
    ]
    for method, url, body, status in steps:
        response = getattr(client, method)(url, json=body, headers=headers)
        assert response.status_code == status, (url, response.json)


def test_an_administrator_configures_levels(client, auth):
    headers = auth.headers("joe")
    _set_up(client, headers)
    assert client.get(API, headers=headers).json == {
        "classes": [
            {"name": "banks", "companies": ["A", "B", "C"]},
            {"name": "oil", "companies": []},
        ],
        "streams": {"in1": {"company": "A"}, "in2": {"multilevel": True}},
        "organisations": {"ed": "B"},
        "clearances": {"CUSTOMER1": {"banks": "A"}},
    }
    entries = client.get("/api/v1/audit?event=levels", headers=headers).json["entries"]
    assert len(entries) == 9 and all(e["allowed"] for e in entries)


@pytest.mark.parametrize(
    ("method", "url", "body", "status", "code"),
    [
        (
            "put",
            f"{API}/roles/CUSTOMER1",
            {"clearance": {"banks": "X"}},
            400,
            "LEVEL_UNKNOWN_COMPANY",
        ),
        ("put", f"{API}/roles/CUSTOMER1", {"clearance": {"cars": "T"}}, 400, "LEVEL_BAD_SHAPE"),
        ("put", f"{API}/roles/NOBODY", {"clearance": {}}, 404, "UNKNOWN_ROLE"),
        ("delete", f"{API}/companies/A", None, 409, "LEVEL_IN_USE"),
        ("delete", f"{API}/classes/banks", None, 409, "LEVEL_IN_USE"),
        ("post", f"{API}/classes/banks/companies", {"name": "T"}, 400, "INVALID_NAME"),
        ("post", f"{API}/classes/banks/companies", {"name": "A"}, 409, "DUPLICATE_NAME"),
        ("put", f"{API}/streams/nothing", {"company": "A"}, 404, "NOT_FOUND"),
    ],
)
def test_refusals_carry_their_codes(client, auth, method, url, body, status, code):
    headers = auth.headers("joe")
    _set_up(client, headers)
    kwargs = {"headers": headers} if body is None else {"headers": headers, "json": body}
    response = getattr(client, method)(url, **kwargs)
    assert (response.status_code, response.json["error"]["code"]) == (status, code)


@pytest.mark.parametrize("user", ["al", "ed", "bob"])
def test_only_administrators(client, auth, user):
    response = client.put(
        f"{API}/roles/CUSTOMER1", json={"clearance": {}}, headers=auth.headers(user)
    )
    assert response.json["error"]["code"] == "PERMISSION_DENIED"
    assert client.get(API, headers=auth.headers(user)).status_code == 403
