"""Login, cookies and CSRF, throttling, headers, the error shape and the deny-by-default guard."""

from __future__ import annotations

import pytest
from serverkit import Client, LiveServer, overrides, wait_until

from boxes.errors import InvalidInput
from catalog import policy
from server.app import close_app, create_app
from server.http import guard
from server.limits.throttle import Throttle
from server.realtime.extension import socketio_of

LOGIN = "/api/v1/auth/login"
NEW = "a brand new password"


def test_login_gives_a_token_and_strict_cookies(client, auth):
    response = auth.login("al")
    assert response.status_code == 200
    assert response.json["user"] == "al" and response.json["roles"] == ["CUSTOMER1"]
    cookies = {c.split("=")[0]: c for c in response.headers.getlist("Set-Cookie")}
    session = cookies["sluice_session"]
    assert "HttpOnly" in session and "SameSite=Strict" in session
    assert "HttpOnly" not in cookies["sluice_csrf"]
    whoami = client.get(
        "/api/v1/auth/whoami", headers={"Authorization": f"Bearer {response.json['token']}"}
    )
    assert whoami.json["csrf_token"] == response.json["csrf_token"]


@pytest.mark.parametrize(
    "user, password", [("al", "wrong password"), ("nobody", "whatever it is"), ("bob", "")]
)
def test_every_credential_failure_looks_the_same(client, auth, user, password):
    response = client.post(LOGIN, json={"user": user, "password": password})
    assert response.status_code == 401
    assert response.json == {
        "error": {"code": "UNAUTHENTICATED", "message": "invalid credentials", "details": {}}
    }


def test_a_disabled_user_gets_the_same_answer(client, auth):
    client.patch("/api/v1/users/al", json={"enabled": False}, headers=auth.headers("joe"))
    assert auth.login("al").json["error"]["message"] == "invalid credentials"


def test_role_activation(auth):
    assert auth.login("al", roles=["CUSTOMER1"]).status_code == 200
    assert auth.login("al", roles=["ADMIN"]).json["error"]["code"] == "ROLE_NOT_PLAYABLE"


def test_failed_logins_are_throttled_per_user_and_address_even_with_the_right_password(
    client, auth
):
    client.patch(
        "/api/v1/system/settings",
        json={"login_attempts_per_minute": 3},
        headers=auth.headers("joe"),
    )
    for _ in range(3):
        assert client.post(LOGIN, json={"user": "al", "password": "guess guess"}).status_code == 401
    refused = auth.login("al")
    assert refused.status_code == 429 and refused.json["error"]["code"] == "TOO_MANY_LOGINS"
    assert int(refused.headers["Retry-After"]) >= 1


def test_failed_logins_are_throttled_per_address_across_users(client, auth):
    client.patch(
        "/api/v1/system/settings",
        json={"login_attempts_per_minute": 2},
        headers=auth.headers("joe"),
    )
    for n in range(2 * Throttle.ADDRESS_FACTOR):
        client.post(LOGIN, json={"user": f"u{n}", "password": "guess guess"})
    assert auth.login("bob").status_code == 429


def test_an_attacker_hammering_a_user_does_not_lock_him_out_elsewhere(client, auth):
    attacker, joes_desk = {"REMOTE_ADDR": "203.0.113.9"}, {"REMOTE_ADDR": "198.51.100.7"}
    client.patch(
        "/api/v1/system/settings",
        json={"login_attempts_per_minute": 3},
        headers=auth.headers("joe"),
    )
    answers = [
        client.post(
            LOGIN, json={"user": "joe", "password": "guess guess"}, environ_base=attacker
        ).status_code
        for _ in range(12)
    ]
    assert answers[:3] == [401] * 3 and set(answers[3:]) == {429}
    assert (
        client.post(
            LOGIN, json={"user": "joe", "password": auth.passwords["joe"]}, environ_base=attacker
        ).status_code
        == 429
    )
    assert (
        client.post(
            LOGIN, json={"user": "joe", "password": auth.passwords["joe"]}, environ_base=joes_desk
        ).status_code
        == 200
    )


def test_an_empty_role_list_is_refused_not_a_session_without_roles(client, auth):
    refused = client.post(LOGIN, json={"user": "al", "password": auth.passwords["al"], "roles": []})
    assert refused.status_code == 400 and refused.json["error"]["code"] == "INVALID_BODY"
    assert "roles" in refused.json["error"]["message"]


def test_cookie_sessions_need_the_csrf_header_for_writes(client, auth):
    csrf = auth.login("al").json["csrf_token"]
    assert client.get("/api/v1/auth/whoami").status_code == 200
    refused = client.post("/api/v1/schemas", json={"name": "t", "fields": {"x": "long"}})
    assert refused.status_code == 403 and refused.json["error"]["code"] == "CSRF_FAILED"
    assert (
        client.post(
            "/api/v1/schemas",
            json={"name": "t", "fields": {"x": "long"}},
            headers={"X-CSRF-Token": "0" * 64},
        ).status_code
        == 403
    )
    assert (
        client.post(
            "/api/v1/schemas",
            json={"name": "t", "fields": {"x": "long"}},
            headers={"X-CSRF-Token": csrf},
        ).status_code
        == 201
    )


def test_logout_ends_the_session_and_clears_cookies(client, auth):
    headers = auth.headers("al")
    response = client.post("/api/v1/auth/logout", headers=headers)
    assert response.status_code == 200
    assert all(
        "Max-Age=0" in c or "expires=Thu, 01 Jan 1970" in c
        for c in response.headers.getlist("Set-Cookie")
    )
    assert client.get("/api/v1/auth/whoami", headers=headers).status_code == 401


@pytest.mark.parametrize("header", ["Basic YWw6cHc=", "Bearer", "Bearer not-a-token", "token"])
def test_bad_authorization_headers(client, header):
    response = client.get("/api/v1/catalog", headers={"Authorization": header})
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize("path", ["/api/v1/catalog", "/api/v1/nowhere", "/api/v1/openapi.json"])
def test_security_headers_on_every_answer(client, path):
    response = client.get(path)
    csp = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize(
    "method, path, status, code",
    [
        ("GET", "/api/v1/nowhere", 404, "NOT_FOUND"),
        ("DELETE", "/api/v1/catalog", 405, "METHOD_NOT_ALLOWED"),
    ],
)
def test_flask_errors_have_the_same_shape(client, method, path, status, code):
    response = client.open(path, method=method)
    assert response.status_code == status and response.json["error"]["code"] == code


def test_a_route_without_an_access_rule_is_refused(app, client):
    app.add_url_rule("/api/v1/forgotten", "forgotten", lambda: {"secret": 42})
    assert guard.unguarded(app) == ["forgotten"]
    response = client.get("/api/v1/forgotten")
    assert response.status_code == 404 and "secret" not in response.get_data(as_text=True)


@pytest.mark.parametrize("secret", ["changeme", "secret", "dev"])
def test_a_weak_secret_is_refused_outside_tests(tmp_path, secret):
    with pytest.raises(InvalidInput, match="WEAK_SECRET"):
        create_app(overrides(tmp_path, testing=False, secret_key=secret))


@pytest.mark.parametrize("end", ["logout", "disable", "password"])
def test_an_ended_session_loses_its_sockets(app, client, auth, end):
    sock = socketio_of(app).test_client(app, auth={"token": auth.token("al")})
    assert sock.is_connected()
    if end == "logout":
        client.post("/api/v1/auth/logout", headers=auth.headers("al"))
    elif end == "disable":
        client.patch("/api/v1/users/al", json={"enabled": False}, headers=auth.headers("joe"))
    else:
        client.patch(
            "/api/v1/users/al", json={"password": "a new long one"}, headers=auth.headers("joe")
        )
    wait_until(lambda: not sock.is_connected(), what="the socket to be disconnected")


def test_a_cookie_socket_needs_the_csrf_token(app, client, auth):
    csrf = auth.login("al").json["csrf_token"]
    assert not socketio_of(app).test_client(app, flask_test_client=client).is_connected()
    assert (
        socketio_of(app)
        .test_client(app, flask_test_client=client, auth={"csrf": csrf})
        .is_connected()
    )


def test_an_expired_session_loses_its_socket(tmp_path):
    app = create_app(
        overrides(
            tmp_path, session_ttl_seconds=3, admin_user="root", admin_password="a long password"
        )
    )
    try:
        token = (
            app.test_client()
            .post(LOGIN, json={"user": "root", "password": "a long password"})
            .json["token"]
        )
        sock = socketio_of(app).test_client(app, auth={"token": token})
        assert sock.is_connected()
        wait_until(lambda: not sock.is_connected(), 15, "the expired session's socket to end")
    finally:
        close_app(app)


@pytest.fixture
def broken_route(app, monkeypatch):
    """Add a public route ``/api/v1/broken`` (listed in the policy table) running ``view``."""

    def add(view):
        monkeypatch.setitem(policy.OPERATIONS, "broken", policy.PUBLIC)
        app.add_url_rule("/api/v1/broken", "broken", guard.guarded()(view))

    return add


def test_a_server_failure_answers_its_code_and_an_incident_the_log_explains(
    client, broken_route, caplog
):
    from boxes.errors import SluiceError

    def broken():
        raise SluiceError(
            code="DEPLOY_FAILED",
            diagram="q1",
            reason="java.lang.OutOfMemoryError: boom\n\tat org.apache.spark.Secret",
        )

    broken_route(broken)
    response = client.get("/api/v1/broken")
    assert response.status_code == 503
    error = response.json["error"]
    incident = error["details"]["incident"]
    assert error == {
        "code": "DEPLOY_FAILED",
        "details": {"incident": incident},
        "message": f"diagram 'q1' could not start: see incident {incident} in the server log",
    }
    logged = [r.getMessage() for r in caplog.records if incident in r.getMessage()]
    assert len(logged) == 1 and "OutOfMemoryError: boom" in logged[0]


def test_an_unexpected_exception_is_a_bare_500_with_an_incident(client, broken_route, caplog):
    def broken():
        raise KeyError("/srv/secret/path")

    broken_route(broken)
    response = client.get("/api/v1/broken")
    assert response.status_code == 500 and "secret" not in response.get_data(as_text=True)
    error = response.json["error"]
    assert error["code"] == "INTERNAL_ERROR"
    incident = error["details"]["incident"]
    assert error["message"].endswith(f"logged as incident {incident}")
    (record,) = [r for r in caplog.records if incident in r.getMessage()]
    assert "/srv/secret/path" in caplog.text and record.exc_info is not None


def test_with_tls_the_cookies_are_secure(tmp_path):
    app = create_app(
        overrides(
            tmp_path,
            tls_cert="cert.pem",
            tls_key="key.pem",
            admin_user="root",
            admin_password="a long password",
        )
    )
    try:
        response = app.test_client().post(
            LOGIN, json={"user": "root", "password": "a long password"}
        )
        assert all("Secure" in c for c in response.headers.getlist("Set-Cookie"))
    finally:
        close_app(app)


@pytest.fixture
def served(app):
    """The test world's app on a loopback port (no Spark: passwords need none)."""
    server = LiveServer(app)
    yield server
    server.stop()


def test_a_user_changes_its_own_password_on_a_real_server(served, auth):
    import requests

    old = auth.passwords["al"]
    al, other = Client(served.url, "al", old), Client(served.url, "al", old)
    wrong = al.call(
        "POST",
        "/auth/password",
        403,
        json={"old_password": "not the one at all", "new_password": NEW},
    )
    assert wrong["error"]["code"] == "WRONG_PASSWORD"
    assert al.call("POST", "/auth/password", json={"old_password": old, "new_password": NEW}) == {
        "user": "al",
        "changed": True,
    }
    assert al.call("GET", "/auth/whoami")["user"] == "al"  # this session stays open
    other.call("GET", "/auth/whoami", 401)  # the others end

    def login(user, password):
        return requests.post(
            served.url + LOGIN, json={"user": user, "password": password}, timeout=30
        ).status_code

    assert (login("al", old), login("al", NEW)) == (401, 200)
    assert all(login(u, auth.passwords[u]) == 200 for u in ("joe", "ed", "bob"))
    joe = Client(served.url, "joe", auth.passwords["joe"])
    entries = joe.call("GET", "/audit?event=password_change")["entries"]
    assert [(e["user"], e["allowed"]) for e in reversed(entries)] == [("al", False), ("al", True)]


def test_a_wrong_old_password_is_throttled_like_a_login(client, auth):
    client.patch(
        "/api/v1/system/settings",
        json={"login_attempts_per_minute": 2},
        headers=auth.headers("joe"),
    )
    guess = {"old_password": "guess guess", "new_password": NEW}
    codes = [
        client.post("/api/v1/auth/password", json=guess, headers=auth.headers("al")).json["error"][
            "code"
        ]
        for _ in range(3)
    ]
    assert codes == ["WRONG_PASSWORD", "WRONG_PASSWORD", "TOO_MANY_LOGINS"]
    right = {"old_password": auth.passwords["al"], "new_password": NEW}
    assert (
        client.post("/api/v1/auth/password", json=right, headers=auth.headers("al")).status_code
        == 429
    )


def test_changing_a_password_with_the_session_cookie_needs_the_csrf_header(client, auth):
    csrf = auth.login("al").json["csrf_token"]
    body = {"old_password": auth.passwords["al"], "new_password": NEW}
    refused = client.post("/api/v1/auth/password", json=body)
    assert refused.json["error"]["code"] == "CSRF_FAILED"
    assert (
        client.post("/api/v1/auth/password", json=body, headers={"X-CSRF-Token": csrf}).status_code
        == 200
    )


def test_an_administrator_cannot_reset_its_own_password_without_the_current_one(client, auth):
    """A stolen administrator session must not be able to lock the administrator out."""
    refused = client.patch(
        "/api/v1/users/joe", json={"password": "taken over now"}, headers=auth.headers("joe")
    )
    assert refused.status_code == 403 and refused.json["error"]["code"] == "OWN_PASSWORD"
    assert (
        client.post(LOGIN, json={"user": "joe", "password": auth.passwords["joe"]}).status_code
        == 200
    )
    audit = client.get("/api/v1/audit?event=user_password", headers=auth.headers("joe")).json
    assert [(e["object"], e["allowed"], e["reason"]) for e in audit["entries"]] == [
        ("user:joe", False, "own password")
    ]
