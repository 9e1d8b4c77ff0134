"""Diagrams written in CQL through the REST API: created, validated and updated like documents,
with every problem at its CQL line and column; the stored document is the compiled one."""

from __future__ import annotations

import pytest

API = "/api/v1/diagrams"
CQL = (
    "CREATE DIAGRAM qc;\n"
    "INSERT INTO oc SELECT symbol, count(*) AS n, avg(price) AS p\n"
    "FROM in1 [PARTITION BY symbol ROWS 10] WHERE price > 1 GROUP BY symbol"
)


def test_a_diagram_from_cql_is_stored_as_its_document(client, auth):
    made = client.post(API, json={"cql": CQL}, headers=auth.headers("al"))
    assert made.status_code == 201, made.json
    assert sorted(o["name"] for o in made.json["objects"]) == [
        "oc",
        "qc",
        "qc.oc_agg",
    ]
    doc = client.get(f"{API}/qc", headers=auth.headers("al")).json["document"]
    assert doc["boxes"]["oc_agg"]["window"] == {"rows": 10}
    assert doc["boxes"]["oc_agg"]["where"] == "price > 1"  # over the window's tuples
    assert doc["outputs"] == {"oc": {"from": "oc_agg"}}


def test_cql_problems_come_with_code_line_and_column(client, auth):
    bad = CQL.replace("avg(price)", "avg(symbol)")
    checked = client.post(f"{API}/validate", json={"cql": bad}, headers=auth.headers("al")).json
    assert checked["valid"] is False
    assert [(p["code"], p["path"]) for p in checked["problems"]] == [("TYPE_MISMATCH", "cql.2.46")]
    refused = client.post(API, json={"cql": "SELECT * FRM in1"}, headers=auth.headers("al"))
    assert refused.status_code == 400
    error = refused.json["error"]
    assert [(p["code"], p["path"]) for p in error["details"]["problems"]] == [
        ("CQL_SYNTAX", "cql.1.10")
    ]
    assert client.get(f"{API}/qc", headers=auth.headers("al")).status_code == 404


def test_a_stream_the_session_cannot_see_looks_missing_in_cql_too(client, auth):
    checked = client.post(
        f"{API}/validate", json={"cql": "SELECT * FROM in1"}, headers=auth.headers("bob")
    ).json
    assert [p["code"] for p in checked["problems"]] == ["NOT_FOUND"]


def test_a_body_has_a_document_or_cql_not_both(client, auth):
    both = client.post(
        f"{API}/validate", json={"cql": CQL, "document": {}}, headers=auth.headers("al")
    )
    assert both.status_code == 400 and both.json["error"]["code"] == "INVALID_BODY"


def test_a_level_by_position_follows_the_catalogs_classes(client, auth):
    """The fixture's classes are banks (A, B, C) and oil, which has no company yet and so no
    place in a level: ``[A]`` is banks A."""

    def check(cql):
        body = {"cql": f"SELECT * FROM in1 {cql}"}
        return client.post(f"{API}/validate", json=body, headers=auth.headers("al")).json

    assert check("AT LEVEL [A]")["document"]["level"] == {"banks": "A"}
    assert check("AT LEVEL [banks: T]")["document"]["level"] == {"banks": "T"}
    wrong = check("AT LEVEL [A, ⊥]")
    assert [(p["code"], p["path"]) for p in wrong["problems"]] == [("CQL_LEVEL", "cql.1.28")]
    assert "2 parts for 1 conflict-of-interest classes" in wrong["problems"][0]["message"]
    unknown = check("AT LEVEL [Z]")
    assert [p["path"] for p in unknown["problems"]] == ["cql.1.28"]


def test_a_document_prints_as_the_cql_that_compiles_back_to_it(client, auth):
    compiled = client.post(f"{API}/validate", json={"cql": CQL}, headers=auth.headers("al")).json
    printed = client.post(
        f"{API}/cql", json={"document": compiled["document"]}, headers=auth.headers("al")
    )
    assert printed.status_code == 200, printed.json
    assert "ROWS 10" in printed.json["cql"]
    again = client.post(
        f"{API}/validate", json={"cql": printed.json["cql"]}, headers=auth.headers("al")
    ).json
    assert again["document"] == compiled["document"]


def test_a_box_feeding_two_outputs_prints_as_a_view_both_read(client, auth):
    doc = client.post(f"{API}/validate", json={"cql": CQL}, headers=auth.headers("al")).json[
        "document"
    ]
    doc["outputs"]["also"] = {"from": "oc_agg"}
    printed = client.post(f"{API}/cql", json={"document": doc}, headers=auth.headers("al"))
    assert printed.status_code == 200, printed.json
    assert "CREATE VIEW oc_agg AS" in printed.json["cql"]
    again = client.post(
        f"{API}/validate", json={"cql": printed.json["cql"]}, headers=auth.headers("al")
    ).json
    assert again["valid"], again
    assert again["document"]["outputs"] == {"oc": {"from": "oc_agg"}, "also": {"from": "oc_agg"}}


def test_a_document_is_printed_only_once_valid_for_the_session(client, auth):
    doc = {"version": 1, "name": "q2", "inputs": {"in1": {}}, "outputs": {"o": {"from": "in1"}}}
    refused = client.post(f"{API}/cql", json={"document": doc}, headers=auth.headers("bob"))
    assert refused.status_code == 400
    assert [p["code"] for p in refused.json["error"]["details"]["problems"]] == ["NOT_FOUND"]
    assert (
        client.post(f"{API}/cql", json={"document": doc}, headers=auth.headers("al"))
        .json["cql"]
        .startswith("CREATE DIAGRAM q2")
    )


@pytest.mark.parametrize(
    "body",
    [
        {"cql": 123},
        {"cql": ""},
        {"cql": "x" * 70_000},
        {"cql": "SELECT * FROM in1", "name": "../../etc"},
        {"cql": "SELECT * FROM in1", "name": "a" * 65},
        {"cql": "CREATE DIAGRAM q_ok; SELECT * FROM in1", "name": 7},
        {"cql": "SELECT * FROM in1 AT LEVEL [" + ", ".join(["T"] * 5000) + "]"},
        {"cql": "CREATE DIAGRAM `x`; SELECT * FROM in1"},
        {"cql": "SELECT * FROM in1; " * 2000},
        {"cql": "SELECT reflect('java.lang.Runtime', 'getRuntime') AS r FROM in1"},
        {"cql": "SELECT _label AS l FROM in1"},
        {"cql": "INSERT INTO _label SELECT * FROM in1"},
        {"cql": "SELECT * FROM in1\x00"},
        {"cql": "SELECT count(*) AS n FROM in1 [ROWS 9999999999999999999999]"},
    ],
)
def test_hostile_cql_gets_a_coded_4xx_and_nothing_is_stored(client, auth, body):
    before = client.get(API, headers=auth.headers("al")).json
    answer = client.post(API, json=body, headers=auth.headers("al"))
    assert 400 <= answer.status_code < 500, answer.json
    assert answer.json["error"]["code"] and answer.json["error"]["message"]
    assert client.get(API, headers=auth.headers("al")).json == before
