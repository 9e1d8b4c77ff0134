"""The socket.io side: authenticated connections, result subscriptions and fast ingestion.

A connection authenticates once, at connect, with ``auth={"token": ...}`` or with the session
cookie plus ``auth={"csrf": ...}`` (a cross-site page can make the browser send the cookie but
cannot read the CSRF token). Every event then re-checks the session through the guard, which
also authorizes it by its rule in the policy table (``socket.EVENT``), and a
sweeper disconnects the sockets of sessions that ended (logout, expiry, disabled or deleted
user, a password reset) as soon as the catalog changes, or when a session's time runs out.

Events (each answered by an ack, ``{"error": {...}}`` on failure, ``UNKNOWN_EVENT`` for any
other event): ``subscribe {output, from?}``, ``unsubscribe {output}`` and ``ingest {stream,
tuples}``. Results arrive as ``tuples {output, tuples: [...], batch, next}``;
``subscribe`` with ``from`` (a ``next`` seen before) first sends what the output's result
log holds from there, then live results, with no gap and nothing twice; ``missed {output,
from, to}`` names positions a subscriber's delivery skipped (to read back the same way);
``subscription_ended {output, error}`` tells a subscriber it lost SUBSCRIBE (or the variant of
a rewritten diagram it read: docs/rewrite.md).

On a server that does not hold the runtime, ``ingest`` and the replay of ``subscribe`` with
``from`` go to the one that does, as the client (``server.realtime.standby``).
"""

from __future__ import annotations

import functools
import hmac
import threading
from collections import Counter
from typing import Any

from flask import request
from flask_socketio import SocketIO

from boxes import codes
from boxes.errors import NotFound, SluiceError, TooMany, Unauthenticated
from catalog import INVALID_SESSION, Catalog, ObjectType, Subject
from server.http import security
from server.http.errors import answer, body, refused_connect, unexpected
from server.http.guard import SOCKET_EVENTS, socket_event
from server.ingest.admission import ingest
from server.ingest.here import here
from server.realtime import standby
from server.runtime.outputs import Asked
from server.services import services

NAMESPACE = "/"
RESERVED = "reserved:"  # marks a client's event named like the server's own
SWEEP_AT_LEAST_EVERY = 5.0
OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"output": {"type": "string", "maxLength": 64}},
    "required": ["output"],
    "additionalProperties": False,
}
SUBSCRIBE = {
    **OUTPUT,
    "properties": {
        **OUTPUT["properties"],
        "from": {"type": "integer", "minimum": 0, "maximum": 2**62},
        "log": {"type": "string", "maxLength": 64},
    },
}
INGEST = {
    "type": "object",
    "properties": {"stream": {"type": "string", "maxLength": 64}, "tuples": {"type": "array"}},
    "required": ["stream", "tuples"],
    "additionalProperties": False,
}


class Connections:
    """Which session each socket belongs to; ends the sockets of sessions that ended. Caps the
    sockets one user, and one client address, may hold open (``caps()``: the two limits), so one
    account cannot take the server's sockets."""

    def __init__(self, catalog: Catalog, disconnect_sid, caps) -> None:
        self.catalog = catalog
        self.disconnect_sid = disconnect_sid
        self.caps = caps
        self._tokens: dict[str, str] = {}
        self._holders: dict[str, tuple[int, str]] = {}  # sid: (user id, address)
        self._per_user: Counter[int] = Counter()
        self._per_address: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._changed = threading.Event()
        self._stopped = threading.Event()
        catalog.on_change(self._changed.set)

    def add(self, sid: str, token: str, address: str) -> Subject:
        subject = self.catalog.sessions.resolve(token)
        per_user, per_address = self.caps()
        with self._lock:
            if self._per_user[subject.user_id] >= per_user:
                raise TooMany(scope=f"user {subject.user_name}", limit=per_user)
            if self._per_address[address] >= per_address:
                raise TooMany(scope=f"address {address}", limit=per_address)
            self._tokens[sid] = token
            self._holders[sid] = (subject.user_id, address)
            self._per_user[subject.user_id] += 1
            self._per_address[address] += 1
        return subject

    def remove(self, sid: str) -> None:
        with self._lock:
            self._tokens.pop(sid, None)
            holder = self._holders.pop(sid, None)
            if holder is not None:
                _release(self._per_user, holder[0])
                _release(self._per_address, holder[1])

    def subject(self, sid: str) -> Subject:
        """The socket's subject, if its session is still valid now."""
        return self.catalog.sessions.resolve(self.token(sid))

    def token(self, sid: str) -> str:
        """The session token the socket connected with."""
        with self._lock:
            token = self._tokens.get(sid)
        if token is None:
            raise Unauthenticated(INVALID_SESSION)
        return token

    def sweep(self) -> list[str]:
        """Disconnect every socket whose session is no longer valid; return their ids."""
        with self._lock:
            tokens = list(self._tokens.items())
        ended = []
        for sid, token in tokens:
            try:
                self.catalog.sessions.resolve(token)
            except Unauthenticated:
                ended.append(sid)
                self.remove(sid)
                self.disconnect_sid(sid)
        return ended

    def run(self) -> None:
        """The sweeper loop: wake on every catalog change, and now and then for expiries."""
        while True:
            self._changed.wait(SWEEP_AT_LEAST_EVERY)
            self._changed.clear()
            if self._stopped.is_set():
                return
            self.sweep()

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name="socket-sweeper", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """End the sweeper and wait for it, so the catalog can be closed after."""
        self._stopped.set()
        self._changed.set()
        self._thread.join()


def _release(counts: Counter, key) -> None:
    counts[key] -= 1
    if counts[key] <= 0:
        del counts[key]


def _sid() -> str:
    """The socket the event came on (Flask-SocketIO sets it on the request)."""
    return request.sid  # type: ignore[attr-defined]


def _token(auth) -> str:
    """The connection's session token: from ``auth``, or the cookie plus its CSRF token."""
    auth = auth if isinstance(auth, dict) else {}
    if isinstance(auth.get("token"), str):
        return auth["token"]
    token = request.cookies.get(security.SESSION_COOKIE)
    csrf = auth.get("csrf")
    if (
        token is None
        or not isinstance(csrf, str)
        or not hmac.compare_digest(csrf.encode(), security.csrf_token(token).encode())
    ):
        raise Unauthenticated(INVALID_SESSION)
    return token


def on_connect(auth=None):
    try:
        services().connections.add(_sid(), _token(auth), request.remote_addr or "?")
    except SluiceError as err:
        raise refused_connect(answer(err)) from None


def on_unexpected(err: Exception):
    """A bug in a handler: its ack is HTTP's bare ``INTERNAL_ERROR``, so no client waits."""
    return unexpected()


def on_unknown(event, *_):
    """An event nobody handles is answered too (``UNKNOWN_EVENT``), so no client waits."""
    shown = event.removeprefix(RESERVED)[:40] if isinstance(event, str) else "?"
    expected = ", ".join(sorted(SOCKET_EVENTS))
    return body(codes.UNKNOWN_EVENT, codes.UNKNOWN_EVENT.render(event=shown, expected=expected))


def on_disconnect(*_):
    svc = services()
    svc.connections.remove(_sid())
    svc.delivery.forget(_sid())


@socket_event("subscribe", SUBSCRIBE)
def on_subscribe(subject: Subject, payload: dict):
    svc, output = services(), payload["output"]
    key = svc.catalog.objects.get(subject, ObjectType.OUTPUT, output).name
    now = here(svc)
    if now.elsewhere and "from" in payload:
        return standby.subscribe_from(
            svc, _sid(), subject, key, payload["from"], payload.get("log")
        )
    if now.elsewhere:
        return standby.subscribe(svc, _sid(), subject, key)
    if "from" not in payload:
        svc.delivery.subscribe(_sid(), subject, key)
        return {"subscribed": output}
    read = functools.partial(now.needed().results, asked=Asked(output, payload.get("log")))
    end = svc.delivery.subscribe_from(_sid(), subject, key, payload["from"], read)
    return {"subscribed": output, "replayed_to": end}


@socket_event("unsubscribe", OUTPUT)
def on_unsubscribe(subject: Subject, payload: dict):
    svc, output = services(), payload["output"]
    if not svc.delivery.unsubscribe(_sid(), key_of(svc, subject, output)):
        raise NotFound(code=codes.NOT_SUBSCRIBED, output=output)
    return {"unsubscribed": output}


def key_of(svc, subject: Subject, output: str) -> str:
    """The key of the output ``subject`` means (``catalog.names``); the name itself for one it
    no longer sees, whose subscription (if any) is under its name."""
    try:
        return svc.catalog.objects.get(subject, ObjectType.OUTPUT, output).name
    except NotFound:
        return output


@socket_event("ingest", INGEST)
def on_ingest(subject: Subject, payload: dict):
    svc = services()
    if here(svc).elsewhere:
        return standby.ingest(svc, _sid(), payload["stream"], payload["tuples"])
    return ingest(svc, subject, payload["stream"], lambda: payload["tuples"])


def _no_reserved_events(server) -> None:
    """A client's event named like the server's own (``connect``, ``disconnect``, the catch-all
    ``*``) is an unknown event (``UNKNOWN_EVENT``), not a call of those handlers:
    python-socketio would run them, and a refused "connect" or a "*" (called without its
    event name) would kill its thread with no acknowledgement."""
    if getattr(server, "sluice_reserved", False):
        return
    handle = server._handle_event  # the one entry of every event packet

    def event(eio_sid, namespace, id, data):
        if isinstance(data, list) and data and data[0] in (*server.reserved_events, "*"):
            data = [RESERVED + data[0], *data[1:]]
        return handle(eio_sid, namespace, id, data)

    server._handle_event, server.sluice_reserved = event, True


def connections(catalog: Catalog, socketio: SocketIO, settings) -> Connections:
    """The connection registry of the sockets of ``socketio`` (started by ``init_app``)."""
    return Connections(
        catalog,
        lambda sid: socketio.server.disconnect(sid, namespace=NAMESPACE),
        lambda: (settings.max_sockets_per_user, settings.max_sockets_per_address),
    )


def init_app(app, svc, socketio: SocketIO) -> None:
    """Register the events on this app's socket server and start the connection registry's
    sweeper."""
    socketio.on_error_default(on_unexpected)
    for event, handler in (
        ("connect", on_connect),
        ("*", on_unknown),
        ("disconnect", on_disconnect),
        ("subscribe", on_subscribe),
        ("unsubscribe", on_unsubscribe),
        ("ingest", on_ingest),
    ):
        socketio.on(event, namespace=NAMESPACE)(handler)
    _no_reserved_events(socketio.server)
    svc.connections.start()
