"""Every socket.io event, with Hypothesis' payloads, from a real socket.io client of each demo
user against ``sluice serve --demo``: the known events, unknown and reserved names, and
malformed, nested, huge-numbered or several-argument payloads. Each is answered by an ack in
the API's shapes (a success, or ``{"error": {code, message, details}}`` with a registered
code), the connection stays up, and no handler dies."""

from __future__ import annotations

import pytest
import socketio
from fuzzkit import EXAMPLES, USERS, Sessions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boxes import codes

KNOWN = ("subscribe", "unsubscribe", "ingest")
NAMES = st.sampled_from(["out1", "in1", "in2", "q1", "nope", "", "A" * 100])
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(1 << 70), max_value=1 << 70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
TIMES = st.sampled_from(
    [-1e15, 1e20, 1.7e12, "99999-01-01T00:00:00Z", None, "2024-01-01T00:00:00Z", 0]
)
TUPLE = st.fixed_dictionaries(
    {
        "symbol": st.text(max_size=8) | JSON,
        "price": st.floats(allow_nan=False, allow_infinity=False) | JSON,
    },
    optional={"time": TIMES | JSON, "extra": JSON},
)
PAYLOADS = (
    JSON
    | st.fixed_dictionaries({"output": NAMES | JSON}, optional={"extra": JSON})
    | st.fixed_dictionaries(
        {"stream": NAMES | JSON, "tuples": st.lists(TUPLE, max_size=3) | JSON},
        optional={"extra": JSON},
    )
)
EVENTS = (
    st.sampled_from(KNOWN)
    | st.sampled_from(["message", "tuples", "connect", "*"])
    | st.text(max_size=20)
)
SUCCESS = {
    "subscribe": {"subscribed"},
    "unsubscribe": {"unsubscribed"},
    "ingest": {"stream", "first_seq", "count"},
}


class Socket:
    """One user's socket.io connection, opened again if the server ended its session."""

    def __init__(self, server, sessions: Sessions, user: str) -> None:
        self.server, self.sessions, self.user = server, sessions, user
        self.client: socketio.Client | None = None

    def connected(self) -> socketio.Client:
        if self.client is None or not self.client.connected:
            self.close()
            self.client = socketio.Client(reconnection=False)
            token = self.sessions.login(self.user)
            self.client.connect(
                self.server.url, auth={"token": token}, transports=["websocket"], wait_timeout=30
            )
        return self.client

    def close(self) -> None:
        if self.client is not None and self.client.connected:
            self.client.disconnect()


@pytest.fixture(scope="module")
def sockets(demo_server):
    sessions = Sessions(demo_server)
    opened = {user: Socket(demo_server, sessions, user) for user in USERS}
    yield opened
    for sock in opened.values():
        sock.close()


def check_ack(event, ack) -> None:
    assert isinstance(ack, dict), ack
    if "error" in ack:
        assert set(ack) == {"error"} and set(ack["error"]) == {"code", "message", "details"}, ack
        assert ack["error"]["code"] in codes.REGISTRY and ack["error"]["code"] != "INTERNAL_ERROR"
        if event not in KNOWN:
            assert ack["error"]["code"] == "UNKNOWN_EVENT", ack
    else:
        assert event in KNOWN and set(ack) == SUCCESS[event], ack


@settings(
    max_examples=EXAMPLES * 100,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)
@given(
    user=st.sampled_from(USERS),
    event=EVENTS,
    payload=PAYLOADS,
    extra_args=st.lists(JSON, max_size=2),
)
def test_every_event_is_acknowledged(sockets, user, event, payload, extra_args):
    client = sockets[user].connected()
    data = tuple([payload, *extra_args]) if extra_args else payload
    ack = client.call(event, data, timeout=10)  # a TimeoutError here is a handler that died
    check_ack(event, ack)
    assert client.connected
