"""What the REST resources answer when the caller may act: the paper's views of the catalog,
object descriptions, permission tables, audit, settings, and the OpenAPI description."""

from __future__ import annotations

import json
import re

import pytest
from openapi_spec_validator import validate
from serverkit import Q1

API = "/api/v1"


def names(response, key):
    return [o["name"] for o in response.json[key]]


@pytest.mark.parametrize(
    "user, seen",
    [
        ("bob", []),
        ("ed", ["fs", "s", "spare", "feed", "guarded", "in1", "in2", "q1", "out1"]),
        ("al", ["fs", "s", "spare", "feed", "in1", "in2", "q1", "q1.avg", "q1.merged", "out1"]),
    ],
)
def test_lookup_shows_only_visible_objects(client, auth, user, seen):
    response = client.get(f"{API}/catalog", headers=auth.headers(user))
    assert names(response, "objects") == seen


def test_a_stream_is_described_with_its_schema_and_source_index(client, auth):
    body = client.get(f"{API}/streams/in2", headers=auth.headers("al")).json
    assert body["schema"]["fields"] == {"time": "timestamp", "symbol": "string", "price": "double"}
    assert body["source_index"] == 1 and body["owner"] == {"user": "joe", "role": "ADMIN"}


def test_create_describe_and_drop_a_schema_and_stream(client, auth):
    headers = auth.headers("ed")
    made = client.post(
        f"{API}/schemas",
        json={"name": "t", "fields": {"at": "timestamp"}, "event_time": "at"},
        headers=headers,
    )
    assert made.status_code == 201 and made.json["schema"]["event_time"] == "at"
    assert (
        client.post(f"{API}/streams", json={"name": "s2", "schema": "t"}, headers=headers).json[
            "source_index"
        ]
        == 4
    )
    assert client.delete(f"{API}/schemas/t", headers=headers).json["error"]["code"] == "IN_USE"
    assert client.delete(f"{API}/streams/s2", headers=headers).status_code == 204
    assert client.delete(f"{API}/schemas/t", headers=headers).status_code == 204


def test_diagram_validation_reports_every_problem_with_its_path(client, auth):
    doc = {
        **Q1,
        "name": "q9",
        "boxes": {
            **Q1["boxes"],
            "avg": {**Q1["boxes"]["avg"], "window": {"size": "soon", "slide": "10s"}},
        },
    }
    body = client.post(
        f"{API}/diagrams/validate", json={"document": doc}, headers=auth.headers("al")
    ).json
    assert body["valid"] is False
    assert [p["path"] for p in body["problems"]] == ["boxes.avg.window.size"]
    ok = client.post(
        f"{API}/diagrams/validate",
        json={"document": {**Q1, "name": "q9"}},
        headers=auth.headers("al"),
    ).json
    assert ok["valid"] and ok["plan"]["inputs"] == ["in1", "in2"]


def test_an_input_the_session_cannot_see_looks_missing(client, auth):
    def problems(name):
        doc = {
            **Q1,
            "name": "q9",
            "inputs": {name: {}},
            "boxes": {},
            "outputs": {"o9": {"from": name}},
        }
        body = client.post(
            f"{API}/diagrams/validate", json={"document": doc}, headers=auth.headers("bob")
        ).json
        return json.dumps(body).replace(name, "NAME")

    assert '"valid": false' in problems("in1") and problems("in1") == problems("in9")


def test_a_diagram_from_yaml_text(client, auth):
    text = (
        "version: 1\nname: q3\ninputs: {in1: {}}\n"
        "boxes: {hi: {type: filter, in: in1, where: 'price > 100'}}\n"
        "outputs: {o3: {from: hi}}\n"
    )
    made = client.post(f"{API}/diagrams", json={"document": text}, headers=auth.headers("al"))
    assert made.status_code == 201 and made.json["status"] == "stopped"
    assert sorted(o["name"] for o in made.json["objects"]) == ["o3", "q3", "q3.hi"]
    assert (
        client.get(f"{API}/diagrams/q3", headers=auth.headers("al")).json["document"]["boxes"][
            "hi"
        ]["where"]
        == "price > 100"
    )


def test_grants_show_in_the_permission_tables_and_the_audit(client, auth):
    path = f"{API}/permissions/output/out1/CUSTOMER2/SUBSCRIBE"
    assert client.put(path, headers=auth.headers("al")).json == {"granted": True}
    assert client.put(path, headers=auth.headers("al")).json == {"granted": False}
    rows = client.get(f"{API}/permissions/output/out1", headers=auth.headers("al")).json
    assert {
        "type": "output",
        "name": "out1",
        "role": "CUSTOMER2",
        "actions": ["SUBSCRIBE"],
        "via": "grant",
    } in rows["permissions"]
    assert client.delete(path, headers=auth.headers("joe")).json == {"revoked": True}
    entries = client.get(
        f"{API}/audit?event=revoke&allowed=true", headers=auth.headers("joe")
    ).json["entries"]
    assert [(e["user"], e["object"], e["details"]) for e in entries] == [
        ("joe", "output:out1", {"role": "CUSTOMER2", "action": "SUBSCRIBE"})
    ]


def test_users_and_roles(client, auth):
    headers = auth.headers("joe")
    assert client.post(f"{API}/roles", json={"name": "AUDITOR"}, headers=headers).status_code == 201
    made = client.post(
        f"{API}/users",
        json={"name": "cy", "password": "long enough pw", "roles": ["AUDITOR"]},
        headers=headers,
    )
    assert made.json == {"name": "cy", "enabled": True, "roles": ["AUDITOR"]}
    client.put(f"{API}/users/cy/roles/CUSTOMER1", headers=headers)
    users = {u["name"]: u for u in client.get(f"{API}/users", headers=headers).json["users"]}
    assert users["cy"]["roles"] == ["AUDITOR", "CUSTOMER1"]
    assert (
        client.delete(f"{API}/roles/ADMIN", headers=headers).json["error"]["code"]
        == "ROLE_OWNS_OBJECTS"
    )


def test_settings_change_all_at_once_or_not_at_all_and_are_audited(client, auth):
    headers = auth.headers("joe")
    url = f"{API}/system/settings"
    changed = client.patch(
        url, json={"max_batch_tuples": 5, "login_attempts_per_minute": 4}, headers=headers
    )
    assert changed.json["settings"]["max_batch_tuples"] == 5
    assert changed.json["configured"]["max_batch_tuples"] == 10_000
    refused = client.patch(
        url, json={"max_batch_tuples": 7, "ingest_tuples_per_second": 0}, headers=headers
    )
    assert refused.json["error"]["code"] == "INVALID_BODY"
    assert client.get(url, headers=headers).json["settings"] == changed.json["settings"]
    reset = client.patch(url, json={"login_attempts_per_minute": None}, headers=headers)
    assert reset.json["settings"]["login_attempts_per_minute"] == 10
    entries = client.get(f"{API}/audit?event=system_settings", headers=headers).json["entries"]
    assert [e["details"] for e in reversed(entries)] == [
        {"setting": "login_attempts_per_minute", "old": 10, "new": 4},
        {"setting": "max_batch_tuples", "old": 10_000, "new": 5},
        {"setting": "login_attempts_per_minute", "old": 4, "new": 10, "reset": True},
    ]
    too_many = client.post(
        f"{API}/streams/feed/tuples", json=[{"x": 1}] * 6, headers=auth.headers("ed")
    )
    assert too_many.status_code == 413


def test_box_types_come_from_the_registry(client, auth):
    types = client.get(f"{API}/box-types", headers=auth.headers("bob")).json["box_types"]
    assert {"filter", "map", "union", "aggregate", "join"} <= {t["type"] for t in types}


def test_box_types_list_the_allow_listed_functions_for_completion(client, auth):
    answer = client.get(f"{API}/box-types", headers=auth.headers("bob")).json
    functions = {f["name"]: f["signature"] for f in answer["functions"]}
    assert functions["round"] == "round(numeric, long?)"
    assert functions["concat"] == "concat(string...)"
    assert "avg" not in functions and "expr" not in functions
    assert {a["name"] for a in answer["aggregates"]} == {"count", "sum", "avg", "min", "max"}


def test_the_openapi_description_is_valid_and_covers_every_route(app, client):
    spec = client.get(f"{API}/openapi.json").json
    validate(spec)
    documented = {(method.upper(), path) for path, item in spec["paths"].items() for method in item}
    routes = {
        (m, re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", r.rule))  # <int:version> is {version}
        for r in app.url_map.iter_rules()
        if r.rule.startswith("/api/")
        for m in r.methods - {"HEAD", "OPTIONS"}
    }
    assert documented == routes
    login = spec["paths"]["/api/v1/auth/login"]["post"]
    assert (
        login["security"] == []
        and "password" in login["requestBody"]["content"]["application/json"]["schema"]["required"]
    )
    assert set(spec["x-socketio-events"]) == {"subscribe", "unsubscribe", "ingest"}
    # a JSON array of tuples, or text its own parser reads (not that array's schema)
    bodies = spec["paths"]["/api/v1/streams/{name}/tuples"]["post"]["requestBody"]["content"]
    assert bodies["application/json"]["schema"]["type"] == "array"
    for text in ("application/x-ndjson", "text/csv", "text/x-nmea"):
        assert bodies[text]["schema"] == {"type": "string"}, text
    reads = spec["paths"]["/api/v1/outputs/{name}/results"]["get"]["parameters"]
    assert {p["name"]: p["required"] for p in reads if p["in"] == "query"} == {
        "from": True,
        "limit": False,
        "log": False,
    }
    change = spec["paths"]["/api/v1/auth/password"]["post"]
    assert (
        change["x-permissions"] == "a session"
        and change["security"]
        and change["requestBody"]["content"]["application/json"]["schema"]["required"]
        == ["old_password", "new_password"]
    )
    assert (
        spec["paths"]["/api/v1/diagrams/{name}"]["put"]["x-permissions"]
        == "OWNER of diagram <name>; ADD on the system"
    )
    assert spec["x-socketio-events"]["subscribe"]["x-permissions"] == "SUBSCRIBE on output <output>"


def test_updating_a_diagram_replaces_it_and_its_grants(client, auth):
    headers = auth.headers("al")
    doc = {**Q1, "boxes": {**Q1["boxes"], "avg": {**Q1["boxes"]["avg"], "group_by": []}}}
    updated = client.put(f"{API}/diagrams/q1", json={"document": doc}, headers=headers)
    assert updated.status_code == 200 and updated.json["document"]["boxes"]["avg"]["group_by"] == []
    assert client.get(f"{API}/outputs/out1", headers=auth.headers("ed")).status_code == 404
    renamed = client.put(
        f"{API}/diagrams/q1", json={"document": {**doc, "name": "q7"}}, headers=headers
    )
    assert renamed.json["error"]["code"] == "NAME_CHANGED"


def test_a_running_diagram_needs_the_runtime_to_update_and_a_failed_update_keeps_it(
    app, client, auth
):
    headers = auth.headers("al")
    cat = app.extensions["sluice"].catalog
    cat.objects.set_query_status(cat.sessions.resolve(auth.token("al")), "q1", "running")
    assert (
        client.put(f"{API}/diagrams/q1", json={"document": Q1}, headers=headers).json["error"][
            "code"
        ]
        == "RUNTIME_UNAVAILABLE"
    )
    client.post(f"{API}/diagrams/q1/stop", headers=headers)
    other = {"version": 1, "name": "q2", "inputs": {"in1": {}}, "outputs": {"o2": {"from": "in1"}}}
    assert (
        client.post(f"{API}/diagrams", json={"document": other}, headers=headers).status_code == 201
    )
    clash = {**other, "name": "q1"}
    refused = client.put(f"{API}/diagrams/q1", json={"document": clash}, headers=headers)
    assert refused.json["error"]["code"] == "DUPLICATE_NAME"
    assert client.get(f"{API}/diagrams/q1", headers=headers).json["document"] == Q1


def test_ingestion_is_rate_limited_per_session(client, auth):
    client.patch(
        f"{API}/system/settings", json={"ingest_tuples_per_second": 2}, headers=auth.headers("joe")
    )
    refused = client.post(
        f"{API}/streams/feed/tuples", json=[{"x": 1}] * 3, headers=auth.headers("ed")
    )
    assert refused.status_code == 429 and refused.json["error"]["code"] == "INGEST_RATE_LIMITED"
    assert int(refused.headers["Retry-After"]) >= 1


def test_an_invisible_output_answers_exactly_like_a_missing_one(app, client, auth):
    from server.realtime.extension import socketio_of

    socketio = socketio_of(app)

    def answers(name):
        rest = client.get(f"{API}/outputs/{name}/recent", headers=auth.headers("bob"))
        sock = socketio.test_client(app, auth={"token": auth.token("bob")})
        ack = sock.emit("subscribe", {"output": name}, callback=True)
        sock.disconnect()
        text = json.dumps([rest.status_code, rest.json, ack])
        return text.replace(name, "NAME")

    assert answers("out1") == answers("out9")


def test_every_operation_declares_its_answer_and_its_parameters(client):
    """What the fuzz checks answers against: a real schema per success, typed path
    parameters, integers no database refuses, and links from what a POST creates to the
    operations on it."""
    spec = client.get(f"{API}/openapi.json").json
    for path, item in spec["paths"].items():
        for method, op in item.items():
            (status,) = [s for s in op["responses"] if s.startswith("2")]
            success = op["responses"][status]
            if status == "204":
                assert "content" not in success, (method, path)
            else:
                schema = success["content"]["application/json"]["schema"]
                assert schema.get("type") or schema.get("oneOf"), (method, path)
            for param in op.get("parameters", ()):
                schema = param["schema"]
                bounded = schema.get("type") == "integer" and "maximum" in schema
                if param["in"] == "path":
                    assert schema.get("pattern") or schema.get("enum") or bounded, path
                if schema.get("type") == "integer":  # SQLite's integers are 64-bit
                    assert bounded and schema["maximum"] < 2**63, (path, param["name"])
    links = spec["paths"]["/api/v1/diagrams"]["post"]["responses"]["201"]["links"]
    assert {"diagrams.deploy.post", "diagrams.delete.delete"} <= set(links)
