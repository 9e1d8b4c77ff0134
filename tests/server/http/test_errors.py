"""The HTTP status of every error comes from its code's entry in the registry (boxes/codes/)."""

from __future__ import annotations

import pytest

from boxes import codes
from boxes.errors import (
    Conflict,
    Denied,
    Gone,
    InvalidInput,
    NotFound,
    RateLimited,
    SluiceError,
    TooLarge,
    Unauthenticated,
)
from catalog import policy
from server.http import guard
from server.http.errors import body

CLASS_OF = {
    400: InvalidInput,
    401: Unauthenticated,
    403: Denied,
    404: NotFound,
    409: Conflict,
    410: Gone,
    413: TooLarge,
    429: RateLimited,
    503: SluiceError,
}
# Never raised as a SluiceError: Werkzeug's wrong method, the catch-all for a bug, what
# gunicorn answers before the app sees the request (server/cli/serve.py), and what the edge
# process tells a socket that never connected (server/edge/process.py).
NOT_RAISED = {
    codes.METHOD_NOT_ALLOWED,
    codes.INTERNAL_ERROR,
    codes.URI_TOO_LONG,
    codes.HEADERS_TOO_LARGE,
    codes.CONNECT_TIMEOUT,
}


def test_every_status_a_code_answers_has_its_error_class():
    assert {c.status for c in codes.REGISTRY.values() if c not in NOT_RAISED} == set(CLASS_OF)


def test_a_raised_code_answers_its_registered_status(app, client, monkeypatch):
    def refuse(name):
        code = codes.lookup(name)
        cls = CLASS_OF[code.status]
        raise cls("the message", code=code, **({"retry_after": 3} if cls is RateLimited else {}))

    monkeypatch.setitem(policy.OPERATIONS, "refuse", policy.PUBLIC)
    app.add_url_rule("/api/v1/refuse/<name>", "refuse", guard.guarded()(refuse))
    answered = {}
    for code in sorted(set(codes.REGISTRY.values()) - NOT_RAISED):
        response = client.get(f"/api/v1/refuse/{code}")
        answered[code] = (
            response.status_code,
            response.json["error"]["code"],
            response.headers.get("Retry-After"),
        )
    assert answered == {
        code: (code.status, code, "3" if code.status == 429 else None) for code in answered
    }
    assert len(answered) == len(codes.REGISTRY) - len(NOT_RAISED)


def test_the_error_shape_takes_only_registered_codes():
    assert body(codes.NOT_SUBSCRIBED, "m")["error"]["code"] == "NOT_SUBSCRIBED"
    with pytest.raises(LookupError):
        body("UNKNOWN_STREAM", "m")


def test_an_unexpected_socket_error_is_acked_like_a_bare_500(app, auth):
    from server.realtime.extension import socketio_of

    socketio = socketio_of(app)

    @socketio.on("test_broken")
    def broken(payload):
        raise KeyError("/srv/secret/path")

    sock = socketio.test_client(app, auth={"token": auth.token("bob")})
    try:
        ack = sock.emit("test_broken", {}, callback=True)
    finally:
        sock.disconnect()
    incident = ack["error"]["details"]["incident"]
    assert ack == {
        "error": {
            "code": "INTERNAL_ERROR",
            "details": {"incident": incident},
            "message": codes.INTERNAL_ERROR.render(incident=incident),
        }
    }
    assert "secret" not in str(ack)
