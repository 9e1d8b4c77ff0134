"""ASSIST policies and user attributes over REST: administrators only, YAML, items or the
paper's XML, answers as declared, errors coded."""

from __future__ import annotations

import pytest

API = "/api/v1/policies"
YAML = """
policies:
  - name: c1-read
    role: CUSTOMER1
    streams: {in1: "*"}
    where: "price > self.floor"
    privilege: read
  - name: c1-count
    role: CUSTOMER1
    streams: {in1: [price]}
    privilege: count
    window: {size: 10m, step: 10m}
"""
XML = """<catalog>
  <role name="Customer One">
    <policy>
      <inputstream name="in1" attributes="*"/>
      <predicate>
        <lessthan>
          <attribute inputstream="in1" name="price"/>
          <method name="Ceiling"/>
        </lessthan>
      </predicate>
      <privilege value="read"/>
    </policy>
  </role>
</catalog>"""


PI = "POLICY_INVALID"


def xml(ceiling: str, text: str = XML) -> dict:
    """The XML catalog with method Ceiling as ``ceiling``, its role mapped to CUSTOMER1."""
    return {"xml": text, "methods": {"Ceiling": ceiling}, "roles": {"Customer One": "CUSTOMER1"}}


def names(client, headers) -> list[str]:
    return [p["name"] for p in client.get(API, headers=headers).json["policies"]]


def test_an_administrator_manages_policies(client, auth):
    headers = auth.headers("joe")
    added = client.post(API, json={"yaml": YAML}, headers=headers)
    expected = {"names": ["c1-read", "c1-count"], "stopped": []}
    assert (added.status_code, added.json) == (201, expected)
    listed = client.get(API, headers=headers).json["policies"]
    assert [p["name"] for p in listed] == ["c1-count", "c1-read", "unused"]
    item = {**listed[1], "where": "price > 2"}
    replaced = client.put(f"{API}/c1-read", json={"policies": [item]}, headers=headers)
    assert replaced.status_code == 200, replaced.json
    assert client.get(API, headers=headers).json["policies"][1]["where"] == "price > 2"
    assert client.delete(f"{API}/c1-count", headers=headers).json == {"stopped": []}
    assert names(client, headers) == ["c1-read", "unused"]
    entries = client.get("/api/v1/audit?event=policies", headers=headers).json["entries"]
    assert len(entries) == 4 + 2 and all(e["allowed"] for e in entries)  # 2: the world's


def test_the_papers_xml_with_methods_and_roles(client, auth):
    body = {
        "xml": XML,
        "methods": {"Ceiling": "self.ceiling"},
        "roles": {"Customer One": "CUSTOMER1"},
    }
    added = client.post(API, json=body, headers=auth.headers("joe"))
    assert added.status_code == 201, added.json
    [policy, _] = client.get(API, headers=auth.headers("joe")).json["policies"]
    assert policy == {
        "name": "Customer One#1",
        "role": "CUSTOMER1",
        "streams": {"in1": "*"},
        "where": "(in1.price) < ((self.ceiling))",
        "privilege": "read",
    }
    gone = client.delete(f"{API}/Customer%20One%231", headers=auth.headers("joe"))
    assert gone.status_code == 200


def test_attributes(client, auth):
    headers = auth.headers("joe")
    values = {"floor": 1.5, "ships": [1, 2], "port": "Singapore", "on": True}
    put = client.put(f"{API}/users/al", json={"attributes": values}, headers=headers)
    assert put.json == {"attributes": values, "stopped": []}
    assert client.get(f"{API}/users/al", headers=headers).json == {"attributes": values}
    # a user reads their own attributes (the live map draws a port's box), nobody else's
    whoami = "/api/v1/auth/whoami"
    assert client.get(whoami, headers=auth.headers("al")).json["attributes"] == values
    assert client.get(whoami, headers=auth.headers("bob")).json["attributes"] == {}


@pytest.mark.parametrize(
    ("method", "url", "body", "status", "code"),
    [
        ("post", API, {"yaml": "policies: [{name: x}]"}, 400, "POLICY_INVALID"),
        ("post", API, {"yaml": "- not a mapping"}, 400, "POLICY_INVALID"),
        ("post", API, {"yaml": YAML.replace("CUSTOMER1", "NOBODY")}, 404, "UNKNOWN_ROLE"),
        ("post", API, {"yaml": YAML, "xml": XML}, 400, "INVALID_BODY"),
        ("post", API, {"xml": "<!DOCTYPE x [<!ENTITY a 'b'>]><x/>"}, 400, "POLICY_INVALID"),
        ("post", API, {"xml": XML, "methods": {"Ceiling": "{0.__class__}"}}, 400, "POLICY_INVALID"),
        ("post", API, {"xml": XML, "methods": {"Ceiling": "{7}"}}, 400, "POLICY_INVALID"),
        # checked over the stream's schema when imported, nothing stored half
        ("post", API, xml("self.ceiling", XML.replace('"price"', '"nothing"')), 400, PI),
        ("post", API, xml("self.ceiling", XML.replace('"*"', '"price,bogus"')), 400, PI),
        ("post", API, xml("reflect('System', 'exit')"), 400, PI),
        ("post", API, xml("java_method('a', 'b')"), 400, PI),
        ("post", API, xml("1) OR (1=1"), 400, PI),
        ("post", API, {"yaml": YAML.replace("self.floor", "java_method('a', 'b')")}, 400, PI),
        ("put", f"{API}/other", {"yaml": YAML}, 400, "POLICY_INVALID"),
        ("delete", f"{API}/nothing", None, 404, "NOT_FOUND"),
        ("put", f"{API}/users/al", {"attributes": {"x": {"a": 1}}}, 400, "INVALID_BODY"),
        ("put", f"{API}/users/al", {"attributes": {"x": 1e400}}, 400, "ATTRIBUTE_INVALID"),
        ("put", f"{API}/users/al", {"attributes": {"x": [[1]]}}, 400, "INVALID_BODY"),
        ("put", f"{API}/users/nobody", {"attributes": {}}, 404, "UNKNOWN_USER"),
        ("get", f"{API}/users/nobody", None, 404, "UNKNOWN_USER"),
    ],
)
def test_refusals_carry_their_codes(client, auth, method, url, body, status, code):
    headers = auth.headers("joe")
    kwargs = {"headers": headers} if body is None else {"headers": headers, "json": body}
    response = getattr(client, method)(url, **kwargs)
    assert (response.status_code, response.json["error"]["code"]) == (status, code), response.json
    assert "<class" not in response.json["error"]["message"]  # no format-string reach
    assert names(client, headers) == ["unused"]


def test_adding_an_existing_name_changes_nothing(client, auth):
    headers = auth.headers("joe")
    client.post(API, json={"yaml": YAML}, headers=headers)
    again = client.post(API, json={"yaml": YAML}, headers=headers)
    assert (again.status_code, again.json["error"]["code"]) == (409, "DUPLICATE_NAME")


@pytest.mark.parametrize("user", ["al", "ed", "bob"])
def test_only_administrators(client, auth, user):
    headers = auth.headers(user)
    assert client.post(API, json={"yaml": YAML}, headers=headers).status_code == 403
    assert client.get(API, headers=headers).status_code == 403
    attrs = client.put(f"{API}/users/al", json={"attributes": {"x": 1}}, headers=headers)
    assert attrs.json["error"]["code"] == "PERMISSION_DENIED"
    assert names(client, auth.headers("joe")) == ["unused"]
