"""Helpers for the server tests: the world they share, settings, and live-server clients.

``build_world`` seeds the paper's users and roles (joe ADMIN, ed INFO_PROVIDER, al CUSTOMER1, bob
CUSTOMER2) through the catalog, plus objects owned by non-administrators so that "owner" and
"administrator" can be told apart: ed owns schema ``fs``, ``spare`` and streams ``feed`` and
``guarded`` (which a policy names); al
owns diagram ``q1`` (inputs in1, in2) and its output ``out1``.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone

from boxes import registry
from catalog import Action, ObjectType
from catalog.bootstrap import seed_demo
from server.control.diagrams import plan_for, spec_of
from tests.paper import Q1

T, A = ObjectType, Action
PASSWORD = "correct horse battery"  # of the administrator the live servers are configured with


def overrides(tmp_path, **more):
    return {
        "data_dir": str(tmp_path),
        "testing": True,
        "runtime": False,
        "bcrypt_rounds": 4,
        **more,
    }


class Auth:
    """Logs users in through the API and hands out their bearer headers."""

    def __init__(self, client, passwords: dict[str, str]) -> None:
        self.client = client
        self.passwords = dict(passwords)  # a test may change one: never the world's own
        self.tokens: dict[str, str] = {}

    def login(self, user: str, roles=None):
        body = {"user": user, "password": self.passwords[user]}
        if roles is not None:
            body["roles"] = roles
        return self.client.post("/api/v1/auth/login", json=body)

    def token(self, user: str) -> str:
        if user not in self.tokens:
            response = self.login(user)
            assert response.status_code == 200, response.json
            self.tokens[user] = response.json["token"]
        return self.tokens[user]

    def headers(self, user: str | None) -> dict:
        return {} if user is None else {"Authorization": f"Bearer {self.token(user)}"}


UNUSED_POLICY = {
    "name": "unused",
    "role": "CUSTOMER1",
    "streams": {"guarded": "*"},
    "privilege": "read",
}


def build_world(cat) -> dict[str, str]:
    """The seeded scenario plus non-administrator owners; returns each user's password."""
    passwords = seed_demo(cat)
    joe = cat.sessions.login("joe", passwords["joe"])[1]
    cat.grants.grant(joe, "INFO_PROVIDER", A.ADD, T.SYSTEM, "system")
    for box_type in registry.operators():
        cat.grants.grant(joe, "INFO_PROVIDER", A.USE, T.BOX_TYPE, box_type)
    ed = cat.sessions.login("ed", passwords["ed"])[1]
    for schema in ("fs", "spare"):
        cat.objects.add_schema(ed, schema, {"fields": {"x": "long"}})
        cat.grants.grant(ed, "CUSTOMER1", A.VIEW_OBJECT, T.SCHEMA, schema)
    cat.objects.add_stream(ed, "feed", "fs")
    for action in (A.VIEW_OBJECT, A.WRITE, A.READ_TUPLE):
        cat.grants.grant(ed, "CUSTOMER1", action, T.STREAM, "feed")
    al = cat.sessions.login("al", passwords["al"])[1]
    cat.objects.add_diagram(al, spec_of(plan_for(cat, al, Q1), Q1))
    for action, type_, name in (
        (A.VIEW_OBJECT, T.DIAGRAM, "q1"),
        (A.SET_QUERY_STATUS, T.DIAGRAM, "q1"),
        (A.VIEW_OBJECT, T.OUTPUT, "out1"),
        (A.SUBSCRIBE, T.OUTPUT, "out1"),
    ):
        cat.grants.grant(al, "INFO_PROVIDER", action, type_, name)
    seed_levels(cat, joe)
    cat.objects.add_stream(ed, "guarded", "fs")  # no diagram reads it
    cat.policies.put(joe, [UNUSED_POLICY])  # only for the policy routes to act on
    cat.policies.set_attributes(joe, "al", {"floor": 1})
    cat.dashboards.put(ed, "main", [{"output": "out1", "view": "table"}])
    for who in (joe, ed, al):
        cat.sessions.logout(who)
    return passwords


def seed_levels(cat, joe) -> None:
    """Two COI classes (``oil`` has no company yet) and an unused company, so that every levels
    route has something to act on; no stream has a company, so nothing else changes."""
    cat.levels.add_class(joe, "banks")
    cat.levels.add_class(joe, "oil")
    for company in ("A", "B", "C"):
        cat.levels.add_company(joe, "banks", company)


def wait_until(condition, timeout: float = 10.0, what: str = "condition", explain=None):
    """Wait for ``condition()`` to be truthy, up to a deadline; return its value. On a
    timeout the failure says what was awaited, and what ``explain()`` says of the state."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            said = "" if explain is None else f"\n{explain()}"
            raise AssertionError(f"timed out waiting for {what}{said}")
        time.sleep(0.02)  # poll: a live server's state, seen only by asking it


class HeldBatches:
    """A runtime whose output batches, while ``held``, wait where they log their results: a
    real batch, stopped in its sink, so the rows that keep arriving really wait (a backlog).
    Installed with ``monkeypatch`` before the diagram is deployed (its sinks bind the hook)."""

    def __init__(self, runtime, monkeypatch) -> None:
        self.held, self._released = threading.Event(), threading.Event()
        logged = runtime.result_logs.advanced

        def advanced(output, location, head):
            if self.held.is_set():
                self._released.wait(120)
            logged(output, location, head)

        monkeypatch.setattr(runtime.result_logs, "advanced", advanced)

    def __enter__(self) -> HeldBatches:
        self.held.set()
        return self

    def __exit__(self, *exc) -> None:
        self.held.clear()
        self._released.set()


def stamped_now(n: int, stream: str = "x") -> list[dict]:
    """``n`` tuples of schema ``s`` with the clock's time: an event-time lag of about zero."""
    stamp = datetime.now(timezone.utc).isoformat()
    return [{"time": stamp, "symbol": stream, "price": 1.0} for _ in range(n)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``sluice serve`` as a child process in its own process group (Spark's JVM included),
    running this tree's code, with a config file of ``settings`` in ``tmp_path``."""

    STARTUP = 180

    def __init__(self, tmp_path, demo: bool = False, **settings) -> None:
        import yaml

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.data = tmp_path / "data"
        self.config = tmp_path / "sluice.yaml"
        self.config.write_text(
            yaml.safe_dump(
                {"data_dir": str(self.data), "port": self.port, "bcrypt_rounds": 4, **settings}
            )
        )
        self.log_path = tmp_path / "server.log"
        self.demo = demo
        self.process = None

    def start(self) -> None:
        import requests

        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "server.cli.main", "serve", "--config", str(self.config)]
            + (["--demo"] if self.demo else []),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

        def up() -> bool:
            assert self.process.poll() is None, open(self.log_path).read()[-3000:]
            # gunicorn listens before its worker has built the app (and started Spark): until
            # then a request is accepted and waits, so a timeout means "not yet" too.
            try:
                return requests.get(f"{self.url}/api/v1/openapi.json", timeout=2).ok
            except (requests.ConnectionError, requests.Timeout):
                return False

        wait_until(up, self.STARTUP, "the server to start")

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


class LiveServer:
    """The app served on a loopback ephemeral port by Werkzeug (what ``sluice serve`` runs),
    in a thread of this process so it can share the suite's SparkSession."""

    def __init__(self, app) -> None:
        from werkzeug.serving import make_server

        self.app = app
        self._server = make_server("127.0.0.1", 0, app, threaded=True)
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._thread.join()


class Client:
    """A user of the live server: one HTTP session (bearer token) and, once asked, one socket."""

    def __init__(self, base: str, user: str, password: str) -> None:
        import requests

        self.base, self.user = base, user
        self.http = requests.Session()
        answer = self.http.post(
            f"{base}/api/v1/auth/login", json={"user": user, "password": password}
        )
        assert answer.status_code == 200, answer.text
        self.token = answer.json()["token"]
        self.http.headers["Authorization"] = f"Bearer {self.token}"
        self.received: list[dict] = []
        self.arrivals: list[float] = []  # time.monotonic() of each tuples event
        self.positions: list[int] = []  # each tuples event's ``next`` result-log position
        self.logs: list[str] = []  # and the result log that position is in
        self.outputs: list[str] = []  # each tuples event's output, as the server names it
        self.acks: list = []  # the answers to the subscriptions ``connect`` sends
        self.connects = 0  # how many times the socket (re)connected
        self.sock = None

    def call(self, method: str, path: str, expect: int = 200, timeout: float = 150, **kwargs):
        """One request; ``timeout`` outlasts the server's own deploy limit (120 s), so a slow
        deploy on a loaded machine fails with the server's code, not the client's patience."""
        answer = self.http.request(method, f"{self.base}/api/v1{path}", timeout=timeout, **kwargs)
        assert answer.status_code == expect, f"{method} {path}: {answer.status_code} {answer.text}"
        return answer.json() if answer.content else None

    def connect(self, resubscribe=(), resume: bool = False) -> None:
        """Open the socket; on every (re)connection subscribe again to ``resubscribe``, with
        ``resume`` from the last position received (so nothing produced meanwhile is lost)."""
        import socketio as sio

        self.sock = sio.Client(reconnection=True, reconnection_delay=0.2)
        self.sock.on("tuples", self._tuples)

        def subscribe() -> None:
            self.connects += 1
            for output in resubscribe:
                since = {"from": self.positions[-1]} if resume and self.positions else {}
                self.sock.emit("subscribe", {"output": output, **since}, callback=self._acked)

        self.sock.on("connect", subscribe)
        self.sock.connect(
            self.base, auth={"token": self.token}, transports=["websocket"], wait_timeout=10
        )

    def _acked(self, *answer) -> None:
        self.acks.append(answer[0] if len(answer) == 1 else answer)

    def _tuples(self, data) -> None:
        self.arrivals.append(time.monotonic())
        self.positions.append(data["next"])
        self.logs.append(data["log"])
        self.outputs.append(data["output"])
        self.received.extend(data["tuples"])

    def emit(self, event: str, payload):
        return self.sock.call(event, payload, timeout=60)

    def close(self) -> None:
        if self.sock is not None:
            self.sock.disconnect()


POSITIVE = {
    "version": 1,
    "name": "q",
    "inputs": {"in1": {}},
    "boxes": {"kept": {"type": "filter", "in": "in1", "where": "x > 0"}},
    "outputs": {"out": {"from": "kept"}},
}


def subscribed_to_positive(url: str) -> Client:
    """joe, on the live server at ``url``, runs ``POSITIVE`` (the tuples of in1, schema
    ``{x: long}``, with x > 0) and is subscribed to its output ``out``."""
    joe = Client(url, "joe", PASSWORD)
    joe.call("POST", "/schemas", 201, json={"name": "s", "fields": {"x": "long"}})
    joe.call("POST", "/streams", 201, json={"name": "in1", "schema": "s"})
    joe.call("POST", "/diagrams", 201, json={"document": POSITIVE})
    joe.call("POST", "/diagrams/q/deploy")
    joe.connect()
    assert joe.emit("subscribe", {"output": "out"}) == {"subscribed": "out"}
    return joe
