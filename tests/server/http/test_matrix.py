"""Authorization matrix: every route and socket event, called with no session, a wrong role, a
right role, the owner and an administrator. A route missing from CASES fails the suite.

Callers (see ``world`` in conftest): bob has no permissions; ed owns ``fs``, ``spare`` and
``feed`` and was granted VIEW, SET_QUERY_STATUS and SUBSCRIBE on al's ``q1``/``out1``; al owns
``q1``/``out1`` and was granted VIEW, WRITE and READ_TUPLE on ``feed``; joe is the administrator.
ed has the dashboard ``main``, which nobody else reaches.
Without Spark (``runtime: False``) an authorized deploy or ingest answers 503: the refusals
around it show the check comes first.
"""

from __future__ import annotations

import pytest
from serverkit import Q1, UNUSED_POLICY

from catalog.policy import OPERATIONS
from server.http import guard
from server.http.guard import SOCKET, SOCKET_EVENTS
from server.realtime.extension import socketio_of

CALLERS = ("anon", "wrong", "right", "owner", "admin")
OBJECT_CALLERS = {"anon": None, "wrong": "bob", "right": "al", "owner": "ed", "admin": "joe"}
DIAGRAM_CALLERS = {"anon": None, "wrong": "bob", "right": "ed", "owner": "al", "admin": "joe"}
ADMIN_CALLERS = {"anon": None, "wrong": "bob", "right": "ed", "owner": "al", "admin": "joe"}
SCHEMA = {"name": "t", "fields": {"x": "long"}}
DOC = {
    "document": {
        "version": 1,
        "name": "q2",
        "inputs": {"in1": {}},
        "outputs": {"o2": {"from": "in1"}},
    }
}
FEED_DOC = {
    "document": {
        "version": 1,
        "name": "q2",
        "inputs": {"feed": {}},
        "outputs": {"o2": {"from": "feed"}},
    }
}
PERM = "/api/v1/permissions/stream/feed/CUSTOMER2/VIEW_OBJECT"

# (method, rule, concrete path, body, callers, statuses for anon, wrong, right, owner, admin)
CASES = [
    ("POST", "/api/v1/auth/login", None, "login", OBJECT_CALLERS, (200, 200, 200, 200, 200)),
    ("POST", "/api/v1/auth/logout", None, None, OBJECT_CALLERS, (401, 200, 200, 200, 200)),
    ("GET", "/api/v1/auth/whoami", None, None, OBJECT_CALLERS, (401, 200, 200, 200, 200)),
    ("GET", "/api/v1/auth/capabilities", None, None, OBJECT_CALLERS, (401, 200, 200, 200, 200)),
    (
        "GET",
        "/api/v1/auth/capabilities/<type_>/<name>",
        "/api/v1/auth/capabilities/stream/feed",
        None,
        OBJECT_CALLERS,
        (401, 404, 200, 200, 200),
    ),
    ("POST", "/api/v1/auth/password", None, "password", OBJECT_CALLERS, (401, 200, 200, 200, 200)),
    ("GET", "/api/v1/openapi.json", None, None, OBJECT_CALLERS, (200, 200, 200, 200, 200)),
    ("GET", "/", None, None, OBJECT_CALLERS, (200, 200, 200, 200, 200)),
    (
        "GET",
        "/static/<path:filename>",
        "/static/missing.js",
        None,
        OBJECT_CALLERS,
        (404, 404, 404, 404, 404),
    ),
    ("GET", "/api/v1/box-types", None, None, OBJECT_CALLERS, (401, 200, 200, 200, 200)),
    ("GET", "/api/v1/catalog", None, None, OBJECT_CALLERS, (401, 200, 200, 200, 200)),
    (
        "GET",
        "/api/v1/catalog/<type_>/<name>",
        "/api/v1/catalog/stream/feed",
        None,
        OBJECT_CALLERS,
        (401, 404, 200, 200, 200),
    ),
    ("GET", "/api/v1/schemas", None, None, OBJECT_CALLERS, (401, 200, 200, 200, 200)),
    ("POST", "/api/v1/schemas", None, SCHEMA, OBJECT_CALLERS, (401, 403, 201, 201, 201)),
    (
        "GET",
        "/api/v1/schemas/<name>",
        "/api/v1/schemas/fs",
        None,
        OBJECT_CALLERS,
        (401, 404, 200, 200, 200),
    ),
    (
        "DELETE",
        "/api/v1/schemas/<name>",
        "/api/v1/schemas/spare",
        None,
        OBJECT_CALLERS,
        (401, 404, 403, 204, 204),
    ),
    ("GET", "/api/v1/streams", None, None, OBJECT_CALLERS, (401, 200, 200, 200, 200)),
    (
        "POST",
        "/api/v1/streams",
        None,
        {"name": "new", "schema": "fs"},
        OBJECT_CALLERS,
        (401, 404, 201, 201, 201),
    ),
    (
        "GET",
        "/api/v1/streams/<name>",
        "/api/v1/streams/feed",
        None,
        OBJECT_CALLERS,
        (401, 404, 200, 200, 200),
    ),
    (
        "DELETE",
        "/api/v1/streams/<name>",
        "/api/v1/streams/feed",
        None,
        OBJECT_CALLERS,
        (401, 404, 403, 204, 204),
    ),
    (
        "GET",
        "/api/v1/streams/<name>/punctuations",
        "/api/v1/streams/feed/punctuations",
        None,
        OBJECT_CALLERS,
        (401, 404, 200, 200, 200),
    ),
    # al may write into feed, but only its owner or an administrator lets sps govern it
    (
        "PUT",
        "/api/v1/streams/<name>/punctuations",
        "/api/v1/streams/feed/punctuations",
        {"governed": True, "tid_field": "x"},
        OBJECT_CALLERS,
        (401, 404, 403, 200, 200),
    ),
    # the server's own policy is an administrator's (feed is not governed: the admin's PUT is
    # judged after the check, SP_STREAM_INVALID)
    (
        "GET",
        "/api/v1/streams/<name>/server_policy",
        "/api/v1/streams/feed/server_policy",
        None,
        OBJECT_CALLERS,
        (401, 403, 403, 403, 200),
    ),
    (
        "PUT",
        "/api/v1/streams/<name>/server_policy",
        "/api/v1/streams/feed/server_policy",
        {"server_policy": []},
        OBJECT_CALLERS,
        (401, 403, 403, 403, 400),
    ),
    (
        "POST",
        "/api/v1/streams/<name>/tuples",
        "/api/v1/streams/feed/tuples",
        [{"x": 1}],
        OBJECT_CALLERS,
        (401, 404, 503, 503, 403),
    ),
    ("GET", "/api/v1/diagrams", None, None, DIAGRAM_CALLERS, (401, 200, 200, 200, 200)),
    # bob holds no ADD: refused before his document is judged (ed: ADD, but no READ_TUPLE on in1)
    ("POST", "/api/v1/diagrams", None, DOC, DIAGRAM_CALLERS, (401, 403, 403, 201, 201)),
    # created and deployed in one: without a runtime nothing is created, once ADD is held
    (
        "POST",
        "/api/v1/diagrams",
        None,
        {**DOC, "deploy": True},
        DIAGRAM_CALLERS,
        (401, 403, 503, 503, 503),
    ),
    ("POST", "/api/v1/diagrams/validate", None, DOC, DIAGRAM_CALLERS, (401, 200, 200, 200, 200)),
    # printed once valid against the streams the caller may view: feed looks missing to bob
    ("POST", "/api/v1/diagrams/cql", None, FEED_DOC, DIAGRAM_CALLERS, (401, 400, 200, 200, 200)),
    (
        "GET",
        "/api/v1/diagrams/<name>",
        "/api/v1/diagrams/q1",
        None,
        DIAGRAM_CALLERS,
        (401, 404, 200, 200, 200),
    ),
    (
        "PUT",
        "/api/v1/diagrams/<name>",
        "/api/v1/diagrams/q1",
        {"document": Q1},
        DIAGRAM_CALLERS,
        (401, 404, 403, 200, 403),
    ),
    (
        "DELETE",
        "/api/v1/diagrams/<name>",
        "/api/v1/diagrams/q1",
        None,
        DIAGRAM_CALLERS,
        (401, 404, 403, 204, 204),
    ),
    (
        "POST",
        "/api/v1/diagrams/<name>/deploy",
        "/api/v1/diagrams/q1/deploy",
        None,
        DIAGRAM_CALLERS,
        (401, 404, 503, 503, 403),
    ),
    (
        "POST",
        "/api/v1/diagrams/<name>/stop",
        "/api/v1/diagrams/q1/stop",
        None,
        DIAGRAM_CALLERS,
        (401, 404, 200, 200, 403),
    ),
    (
        "GET",
        "/api/v1/diagrams/<name>/status",
        "/api/v1/diagrams/q1/status",
        None,
        DIAGRAM_CALLERS,
        (401, 404, 200, 200, 200),
    ),
    (
        "GET",
        "/api/v1/diagrams/<name>/versions",
        "/api/v1/diagrams/q1/versions",
        None,
        DIAGRAM_CALLERS,
        (401, 404, 200, 200, 200),
    ),
    (
        "GET",
        "/api/v1/diagrams/<name>/versions/<int:version>",
        "/api/v1/diagrams/q1/versions/1",
        None,
        DIAGRAM_CALLERS,
        (401, 404, 200, 200, 200),
    ),
    (
        "GET",
        "/api/v1/diagrams/<name>/versions/<int:version>/compare/<int:other>",
        "/api/v1/diagrams/q1/versions/1/compare/1",
        None,
        DIAGRAM_CALLERS,
        (401, 404, 200, 200, 200),
    ),
    (
        "POST",
        "/api/v1/diagrams/<name>/versions/<int:version>/restore",
        "/api/v1/diagrams/q1/versions/1/restore",
        None,
        DIAGRAM_CALLERS,
        (401, 404, 403, 200, 403),  # the owner's, as replacing the diagram is
    ),
    (
        "GET",
        "/api/v1/diagrams/<name>/boxes/<box>/preview",
        "/api/v1/diagrams/q1/boxes/in1/preview",
        None,
        DIAGRAM_CALLERS,
        (401, 404, 409, 409, 409),  # allowed, but q1 is not running (no Spark here)
    ),
    ("GET", "/api/v1/outputs", None, None, DIAGRAM_CALLERS, (401, 200, 200, 200, 200)),
    (
        "GET",
        "/api/v1/outputs/<name>",
        "/api/v1/outputs/out1",
        None,
        DIAGRAM_CALLERS,
        (401, 404, 200, 200, 200),
    ),
    (
        "GET",
        "/api/v1/outputs/<name>/recent",
        "/api/v1/outputs/out1/recent",
        None,
        DIAGRAM_CALLERS,
        (401, 404, 200, 200, 403),
    ),
    (
        "GET",
        "/api/v1/outputs/<name>/results",
        "/api/v1/outputs/out1/results?from=0",
        None,
        DIAGRAM_CALLERS,
        (401, 404, 503, 503, 403),  # allowed, then: this app runs no stream runtime
    ),
    (
        "POST",
        "/api/v1/outputs/<name>/variant",
        "/api/v1/outputs/out1/variant",
        None,
        DIAGRAM_CALLERS,
        (401, 404, 503, 503, 403),  # allowed, then: this app runs no stream runtime
    ),
    ("GET", "/api/v1/dashboards", None, None, OBJECT_CALLERS, (401, 200, 200, 200, 200)),
    (
        "GET",
        "/api/v1/dashboards/<name>",
        "/api/v1/dashboards/main",
        None,
        OBJECT_CALLERS,
        (401, 404, 404, 200, 404),
    ),
    (
        "PUT",
        "/api/v1/dashboards/<name>",
        "/api/v1/dashboards/main",
        {"panels": [{"output": "out1", "view": "chart", "options": {"field": "avg_price"}}]},
        OBJECT_CALLERS,
        (401, 200, 200, 200, 200),
    ),
    (
        "DELETE",
        "/api/v1/dashboards/<name>",
        "/api/v1/dashboards/main",
        None,
        OBJECT_CALLERS,
        (401, 404, 404, 204, 404),
    ),
    ("GET", "/api/v1/permissions", None, None, ADMIN_CALLERS, (401, 403, 403, 403, 200)),
    (
        "GET",
        "/api/v1/permissions/<type_>/<name>",
        "/api/v1/permissions/stream/feed",
        None,
        OBJECT_CALLERS,
        (401, 404, 403, 200, 200),
    ),
    (
        "PUT",
        "/api/v1/permissions/<type_>/<name>/<role>/<action>",
        PERM,
        None,
        OBJECT_CALLERS,
        (401, 404, 403, 200, 403),
    ),
    (
        "DELETE",
        "/api/v1/permissions/<type_>/<name>/<role>/<action>",
        PERM,
        None,
        OBJECT_CALLERS,
        (401, 404, 403, 200, 200),
    ),
    ("GET", "/api/v1/users", None, None, ADMIN_CALLERS, (401, 403, 403, 403, 200)),
    (
        "POST",
        "/api/v1/users",
        None,
        {"name": "cy", "password": "long enough pw"},
        ADMIN_CALLERS,
        (401, 403, 403, 403, 201),
    ),
    (
        "PATCH",
        "/api/v1/users/<name>",
        "/api/v1/users/bob",
        {"enabled": False},
        ADMIN_CALLERS,
        (401, 403, 403, 403, 200),
    ),
    (
        "DELETE",
        "/api/v1/users/<name>",
        "/api/v1/users/ed",
        None,
        ADMIN_CALLERS,
        (401, 403, 403, 403, 204),
    ),
    (
        "PUT",
        "/api/v1/users/<name>/roles/<role>",
        "/api/v1/users/bob/roles/CUSTOMER1",
        None,
        ADMIN_CALLERS,
        (401, 403, 403, 403, 200),
    ),
    (
        "DELETE",
        "/api/v1/users/<name>/roles/<role>",
        "/api/v1/users/bob/roles/CUSTOMER2",
        None,
        ADMIN_CALLERS,
        (401, 403, 403, 403, 200),
    ),
    ("GET", "/api/v1/roles", None, None, ADMIN_CALLERS, (401, 403, 403, 403, 200)),
    ("POST", "/api/v1/roles", None, {"name": "AUDITOR"}, ADMIN_CALLERS, (401, 403, 403, 403, 201)),
    (
        "DELETE",
        "/api/v1/roles/<name>",
        "/api/v1/roles/CUSTOMER2",
        None,
        ADMIN_CALLERS,
        (401, 403, 403, 403, 204),
    ),
    (
        "GET",
        "/api/v1/roles/<name>/limits",
        "/api/v1/roles/CUSTOMER1/limits",
        None,
        ADMIN_CALLERS,
        (401, 403, 403, 403, 200),
    ),
    (
        "PATCH",
        "/api/v1/roles/<name>/limits",
        "/api/v1/roles/CUSTOMER1/limits",
        {"window_seconds": 60},
        ADMIN_CALLERS,
        (401, 403, 403, 403, 200),
    ),
    ("GET", "/api/v1/levels", None, None, ADMIN_CALLERS, (401, 403, 403, 403, 200)),
    (
        "POST",
        "/api/v1/levels/classes",
        None,
        {"name": "cars"},
        ADMIN_CALLERS,
        (401, 403, 403, 403, 201),
    ),
    (
        "DELETE",
        "/api/v1/levels/classes/<name>",
        "/api/v1/levels/classes/oil",
        None,
        ADMIN_CALLERS,
        (401, 403, 403, 403, 204),
    ),
    (
        "POST",
        "/api/v1/levels/classes/<name>/companies",
        "/api/v1/levels/classes/oil/companies",
        {"name": "X"},
        ADMIN_CALLERS,
        (401, 403, 403, 403, 201),
    ),
    (
        "DELETE",
        "/api/v1/levels/companies/<name>",
        "/api/v1/levels/companies/C",
        None,
        ADMIN_CALLERS,
        (401, 403, 403, 403, 204),
    ),
    (
        "PUT",
        "/api/v1/levels/streams/<name>",
        "/api/v1/levels/streams/feed",
        {"company": "A"},
        ADMIN_CALLERS,
        (401, 403, 403, 403, 200),
    ),
    (
        "PUT",
        "/api/v1/levels/roles/<name>",
        "/api/v1/levels/roles/CUSTOMER1",
        {"clearance": {"banks": "T"}},
        ADMIN_CALLERS,
        (401, 403, 403, 403, 200),
    ),
    (
        "PUT",
        "/api/v1/levels/users/<name>",
        "/api/v1/levels/users/ed",
        {"organisation": "B"},
        ADMIN_CALLERS,
        (401, 403, 403, 403, 200),
    ),
    ("GET", "/api/v1/policies", None, None, ADMIN_CALLERS, (401, 403, 403, 403, 200)),
    (
        "POST",
        "/api/v1/policies",
        None,
        {"policies": [{**UNUSED_POLICY, "name": "new"}]},
        ADMIN_CALLERS,
        (401, 403, 403, 403, 201),
    ),
    (
        "PUT",
        "/api/v1/policies/<name>",
        "/api/v1/policies/unused",
        {"policies": [UNUSED_POLICY]},
        ADMIN_CALLERS,
        (401, 403, 403, 403, 200),
    ),
    (
        "DELETE",
        "/api/v1/policies/<name>",
        "/api/v1/policies/unused",
        None,
        ADMIN_CALLERS,
        (401, 403, 403, 403, 200),
    ),
    (
        "GET",
        "/api/v1/policies/users/<name>",
        "/api/v1/policies/users/al",
        None,
        ADMIN_CALLERS,
        (401, 403, 403, 403, 200),
    ),
    (
        "PUT",
        "/api/v1/policies/users/<name>",
        "/api/v1/policies/users/al",
        {"attributes": {"floor": 2}},
        ADMIN_CALLERS,
        (401, 403, 403, 403, 200),
    ),
    ("GET", "/api/v1/audit", None, None, ADMIN_CALLERS, (401, 403, 403, 403, 200)),
    ("GET", "/api/v1/system/status", None, None, ADMIN_CALLERS, (401, 403, 403, 403, 200)),
    ("GET", "/api/v1/system/settings", None, None, ADMIN_CALLERS, (401, 403, 403, 403, 200)),
    (
        "PATCH",
        "/api/v1/system/settings",
        None,
        {"max_batch_tuples": 5},
        ADMIN_CALLERS,
        (401, 403, 403, 403, 200),
    ),
]


def test_every_route_is_in_the_matrix(app):
    routes = {
        (m, r.rule) for r in app.url_map.iter_rules() for m in r.methods - {"HEAD", "OPTIONS"}
    }
    listed = {(case[0], case[1]) for case in CASES}
    assert routes - listed == set(), "routes missing from the authorization matrix"
    assert listed - routes == set(), "matrix rows for routes that do not exist"


@pytest.mark.parametrize("column", range(len(CALLERS)), ids=CALLERS)
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]} {c[1]}" for c in CASES])
def test_route(client, auth, case, column):
    method, rule, path, body, callers, expected = case
    user = callers[CALLERS[column]]
    if body == "login":
        body = {"user": "al", "password": auth.passwords["al"]}
    elif body == "password":
        body = {
            "old_password": auth.passwords.get(user, "anything"),
            "new_password": "a brand new password",
        }
    response = client.open(path or rule, method=method, json=body, headers=auth.headers(user))
    assert response.status_code == expected[column], response.get_data(as_text=True)
    if response.status_code >= 400:
        assert set(response.json["error"]) == {"code", "message", "details"}


SOCKET_CASES = [
    (
        "subscribe",
        {"output": "out1"},
        DIAGRAM_CALLERS,
        (None, "NOT_FOUND", "ok", "ok", "PERMISSION_DENIED"),
    ),
    (
        "unsubscribe",
        {"output": "out1"},
        DIAGRAM_CALLERS,
        (None, "NOT_SUBSCRIBED", "NOT_SUBSCRIBED", "NOT_SUBSCRIBED", "NOT_SUBSCRIBED"),
    ),
    (
        "ingest",
        {"stream": "feed", "tuples": [{"x": 1}]},
        OBJECT_CALLERS,
        (None, "NOT_FOUND", "RUNTIME_UNAVAILABLE", "RUNTIME_UNAVAILABLE", "PERMISSION_DENIED"),
    ),
]


def test_every_socket_event_is_in_the_matrix():
    assert {c[0] for c in SOCKET_CASES} == set(SOCKET_EVENTS)


def test_a_socket_without_a_session_is_refused(app, auth):
    for auth_arg in (None, {"token": "forged"}, {"csrf": "x"}):
        sock = socketio_of(app).test_client(app, auth=auth_arg)
        assert not sock.is_connected()


@pytest.mark.parametrize("column", range(1, len(CALLERS)), ids=CALLERS[1:])
@pytest.mark.parametrize("case", SOCKET_CASES, ids=[c[0] for c in SOCKET_CASES])
def test_socket_event(app, auth, case, column):
    event, payload, callers, expected = case
    sock = socketio_of(app).test_client(app, auth={"token": auth.token(callers[CALLERS[column]])})
    assert sock.is_connected()
    ack = sock.emit(event, payload, callback=True)
    assert (ack["error"]["code"] if "error" in ack else "ok") == expected[column], ack
    sock.disconnect()


def test_the_policy_table_lists_every_route_and_socket_event_and_nothing_else(app):
    operations = {guard.operation(e) for e in app.view_functions} | {
        SOCKET + name for name in SOCKET_EVENTS
    }
    assert operations - set(OPERATIONS) == set(), "operations missing from the policy table"
    assert set(OPERATIONS) - operations == set(), "policy rules for operations that do not exist"
    assert guard.unguarded(app) == []


def test_a_route_the_policy_table_does_not_list_is_refused(app, client, auth):
    ran = []
    app.add_url_rule(
        "/api/v1/unlisted", "unlisted", guard.guarded()(lambda: ran.append(1) or {"secret": 42})
    )
    assert guard.unguarded(app) == ["unlisted"]
    for user in (None, "joe"):
        response = client.get("/api/v1/unlisted", headers=auth.headers(user))
        assert response.status_code == 404 and "secret" not in response.get_data(as_text=True)
    assert ran == []


def test_a_socket_event_the_policy_table_does_not_list_is_refused(app, auth, monkeypatch):
    monkeypatch.setattr(guard, "SOCKET_EVENTS", dict(SOCKET_EVENTS))
    ran = []
    socketio_of(app).on("unlisted")(
        guard.socket_event("unlisted", {"type": "object"})(
            lambda who, payload: ran.append(payload) or {"ok": True}
        )
    )
    assert guard.unguarded(app) == ["socket.unlisted"]
    sock = socketio_of(app).test_client(app, auth={"token": auth.token("joe")})
    ack = sock.emit("unlisted", {}, callback=True)
    sock.disconnect()
    assert ack["error"]["code"] == "PERMISSION_DENIED" and ran == []
