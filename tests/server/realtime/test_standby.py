"""A standby's socket.io events that need the runtime (server/realtime/standby.py), on a server
without one whose catalog names another as the runtime lease's holder: a stand-in for that
holder's REST API on loopback records what reaches it and answers as told, so what the standby
sends and how it answers its socket can be checked exactly (the real holder's side is
tests/server/scenarios/test_runtime_lease.py's)."""

from __future__ import annotations

import json
import queue
from http.server import BaseHTTPRequestHandler

import numpy as np
import pyarrow as pa
import pytest
from loopback import LoopbackServer
from serverkit import PASSWORD

from boxes.secfilter import label_array
from catalog import ObjectType
from server.control import rewrites
from server.control.lease import LEASE
from server.realtime.delivery import ENDED_EVENT, POLICY_EVENT, TUPLES_EVENT, Labels
from server.realtime.extension import socketio_of
from server.realtime.standby import Keepalive
from server.runtime.outputs import BATCH_KEY, LOG_KEY, NEXT_KEY
from tests.server.scenarios.test_policies_scenario import POLICIES, PORT_BOX, POSITION, watch

FORWARDED = "X-Sluice-Forwarded"
ROW = {"symbol": "X", "_sources": ["in1"]}
SCENARIO_GRANTS = (
    ("schema", "position", "VIEW_OBJECT"),
    ("stream", "ais", "VIEW_OBJECT"),
    ("stream", "ais", "READ_TUPLE"),
    ("system", "system", "ADD"),
    ("box_type", "filter", "USE"),
)


class Holder:
    """The holder's REST API as the standby sees it: each request it gets is put on ``asked``
    (method, path, headers, body), and answered with the next of ``answers`` (status, JSON)."""

    def __init__(self) -> None:
        self.asked: queue.Queue = queue.Queue()
        self.answers: list[tuple[int, dict]] = []
        holder = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                holder.asked.put((self.command, self.path, dict(self.headers), body))
                status, answer = holder.answers.pop(0)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer

            def log_message(self, *_) -> None:
                pass

        self.loopback = LoopbackServer(Handler)
        self.url = self.loopback.url
        self.stop = self.loopback.stop


@pytest.fixture
def holder(app):
    stand_in = Holder()
    app.extensions["sluice"].catalog.leases.take(LEASE, "elsewhere", 600, stand_in.url)
    yield stand_in
    stand_in.stop()


@pytest.fixture(params=["token", "cookie"])
def ed_socket(request, app, client, auth):
    """ed's socket (WRITE on ``feed``), connected with its bearer token or its session cookie,
    and the session token it stands for."""
    if request.param == "token":
        token = auth.token("ed")
        return socketio_of(app).test_client(app, auth={"token": token}), token
    csrf = auth.login("ed").json["csrf_token"]
    token = client.get_cookie("sluice_session").value
    return socketio_of(app).test_client(app, flask_test_client=client, auth={"csrf": csrf}), token


def test_a_socket_ingest_goes_to_the_holder_as_its_client_and_is_acked_with_its_answer(
    holder, ed_socket
):
    sock, token = ed_socket
    acked = {"stream": "feed", "first_seq": 7, "count": 1}
    refused = {"error": {"code": "PERMISSION_DENIED", "message": "no", "details": {}}}
    holder.answers += [(200, acked), (403, refused)]
    assert sock.emit("ingest", {"stream": "feed", "tuples": [{"x": 1}]}, callback=True) == acked
    method, path, headers, body = holder.asked.get(timeout=5)
    assert (method, path) == ("POST", "/api/v1/streams/feed/tuples")
    assert json.loads(body) == [{"x": 1}]
    assert headers["Authorization"] == f"Bearer {token}" and "Cookie" not in headers
    assert headers[FORWARDED] == "1"  # the holder passes it on no further
    assert sock.emit("ingest", {"stream": "feed", "tuples": []}, callback=True) == refused


def positioned(symbols: list[str], next_: int) -> pa.Table:
    """A relayed batch of ``out1`` (rows from input in1) ending at position ``next_``."""
    table = pa.table({"symbol": symbols, "_label": label_array([np.ones(len(symbols), np.uint64)])})
    return table.replace_schema_metadata(
        {BATCH_KEY: b"0", NEXT_KEY: str(next_).encode(), LOG_KEY: b"log"}
    )


def test_a_subscribe_from_replays_the_holders_log_then_the_relayed_batches_after_it(
    app, holder, auth
):
    svc = app.extensions["sluice"]
    sock = socketio_of(app).test_client(app, auth={"token": auth.token("al")})
    page = {"output": "out1", "from": 1, "oldest": 0, "log": "log"}
    holder.answers += [(200, {**page, "tuples": [ROW], "next": 3})]
    holder.answers += [(200, {**page, "tuples": [], "next": 3})]
    ack = sock.emit("subscribe", {"output": "out1", "from": 1}, callback=True)
    assert ack == {"subscribed": "out1", "replayed_to": 3}
    paths = [holder.asked.get(timeout=5)[1] for _ in range(2)]
    assert paths == [f"/api/v1/outputs/out1/results?from={at}&limit=1000" for at in (1, 3)]
    sources = {"in1": svc.catalog.core.snapshot.find(ObjectType.STREAM, "in1").source_index}
    svc.delivery.adopt(
        "out1", Labels(("in1",), sources), "strong", None, "out1"
    )  # as the relay does
    svc.delivery.on_batch("out1", positioned(["replayed"], 3))  # reached this server late
    svc.delivery.on_batch("out1", positioned(["live"], 4))
    got = [(e["name"], e["args"][0]["tuples"], e["args"][0]["next"]) for e in sock.get_received()]
    live = {"symbol": "live", "_sources": ["in1"]}
    assert got == [(TUPLES_EVENT, [ROW], 3), (TUPLES_EVENT, [live], 4)]


def test_a_replay_of_a_governed_output_sends_each_run_after_its_policy(app, holder, auth):
    sock = socketio_of(app).test_client(app, auth={"token": auth.token("al")})
    rows = [{**ROW, "n": n} for n in range(4)]
    runs = [{"roles": ["CUSTOMER1"], "tuples": n} for n in (2, 1)]  # one policy, two pages
    runs.append({"roles": ["CUSTOMER1", "INFO_PROVIDER"], "tuples": 1})  # as the holder says
    page = {"output": "out1", "from": 0, "oldest": 0, "log": "log", "tuples": rows, "next": 4}
    holder.answers += [(200, {**page, "policies": runs})]
    holder.answers += [(200, {**page, "tuples": [], "policies": [], "from": 4})]
    ack = sock.emit("subscribe", {"output": "out1", "from": 0}, callback=True)
    assert ack == {"subscribed": "out1", "replayed_to": 4}
    got = [(e["name"], e["args"][0]) for e in sock.get_received()]
    # a policy event before the rows it governs, again only when the roles change
    assert [name for name, _ in got] == [
        POLICY_EVENT,
        *[TUPLES_EVENT] * 2,
        POLICY_EVENT,
        TUPLES_EVENT,
    ]
    assert got[0][1] == {"output": "out1", "roles": ["CUSTOMER1"]}
    assert got[3][1] == {"output": "out1", "roles": ["CUSTOMER1", "INFO_PROVIDER"]}
    assert [t["n"] for name, args in got if name == TUPLES_EVENT for t in args["tuples"]] == [
        0,
        1,
        2,
        3,
    ]


def test_the_holders_refusal_of_the_replay_is_the_ack_and_subscribes_nothing(app, holder, auth):
    sock = socketio_of(app).test_client(app, auth={"token": auth.token("al")})
    expired = {"error": {"code": "RESULTS_EXPIRED", "message": "gone", "details": {"oldest": 9}}}
    holder.answers.append((410, expired))
    assert sock.emit("subscribe", {"output": "out1", "from": 0}, callback=True) == expired
    assert app.extensions["sluice"].delivery.readers("out1") == 0


def rewritten_watch(app, client, auth) -> tuple[str, str]:
    """The policies scenario's port authority (pa) and ship company (sc), and pa's diagram
    recorded as deployed rewritten for pa (as the holder's deploy records it): its output,
    and the fingerprint of pa's rewrite."""
    catalog = app.extensions["sluice"].catalog

    def call(user: str, method: str, path: str, body=None) -> None:
        answer = client.open(f"/api/v1{path}", method=method, json=body, headers=auth.headers(user))
        assert answer.status_code < 300, answer.get_json()

    call("joe", "POST", "/schemas", {"name": "position", **POSITION})
    call("joe", "POST", "/streams", {"name": "ais", "schema": "position"})
    for user, role in (("pa", "PORT"), ("sc", "SHIPCO")):
        call("joe", "POST", "/roles", {"name": role})
        call("joe", "POST", "/users", {"name": user, "password": PASSWORD, "roles": [role]})
        auth.passwords[user] = PASSWORD
        for type_, name, action in SCENARIO_GRANTS:
            call("joe", "PUT", f"/permissions/{type_}/{name}/{role}/{action}")
    call("joe", "POST", "/policies", {"yaml": POLICIES})
    call("joe", "PUT", "/policies/users/pa", {"attributes": PORT_BOX})
    call("joe", "PUT", "/policies/users/sc", {"attributes": {"ships": [1, 3]}})
    call("pa", "POST", "/diagrams", {"document": watch("pa_watch")})
    for action in ("VIEW_OBJECT", "SUBSCRIBE"):
        call("pa", "PUT", f"/permissions/output/pa_watch_out/SHIPCO/{action}")
    diagram = catalog.core.snapshot.find(ObjectType.DIAGRAM, "pa_watch")
    doc, plan = (
        json.loads(diagram.spec),
        rewrites._plan(catalog.objects.resumable_of(diagram), catalog),
    )
    rewrites.deployed_plan(catalog, diagram, doc, plan, catalog.sessions.resolve(auth.token("pa")))
    key = rewrites.rewrite_key(catalog, "pa_watch_out")
    assert key is not None
    return "pa_watch_out", key


def own_key(catalog, user_token: str, output: str) -> str:
    """The fingerprint of a session's own rewrite of ``output``'s diagram."""
    who = catalog.sessions.resolve(user_token)
    return rewrites.key_of(rewrites.readers_rewrite(catalog, who, output).document)


def codes_of(sock, event: str) -> list:
    """The arguments of the ``event`` events a socket received since last asked (an ended
    subscription's: its error code)."""
    got = [e["args"][0] for e in sock.get_received() if e["name"] == event]
    return [a["error"]["code"] for a in got] if event == ENDED_EVENT else got


def test_a_rewritten_output_reaches_each_reader_here_through_its_own_rewrite(
    app, client, auth, holder
):
    svc = app.extensions["sluice"]
    out, key = rewritten_watch(app, client, auth)
    pa, sc = (
        socketio_of(app).test_client(app, auth={"token": auth.token(u)}) for u in ("pa", "sc")
    )
    labels = Labels(
        ("ais",), {"ais": svc.catalog.core.snapshot.find(ObjectType.STREAM, "ais").source_index}
    )
    # pa's rewrite is the deployed one: pa reads the output itself, the holder is not asked
    assert pa.emit("subscribe", {"output": out}, callback=True) == {"subscribed": out}
    assert holder.asked.empty()
    # sc's policies rewrite the diagram otherwise: sc reads its variant, which the holder runs
    sc_key = own_key(svc.catalog, auth.token("sc"), out)
    routed = f"{out}.v-{sc_key}"
    holder.answers.append((200, {"output": out, "route": routed}))
    assert sc.emit("subscribe", {"output": out}, callback=True) == {"subscribed": out}
    method, path, headers, _ = holder.asked.get(timeout=5)
    assert (method, path) == ("POST", f"/api/v1/outputs/{out}/variant")
    assert headers["Authorization"] == f"Bearer {auth.token('sc')}"

    # relayed batches: the output's under pa's rewrite, the variant's under sc's
    svc.delivery.adopt(out, labels, "strong", key, out)
    svc.delivery.on_batch(out, positioned(["pa's"], 1))
    svc.delivery.adopt(routed, labels, "strong", sc_key, out)
    svc.delivery.on_batch(routed, positioned(["sc's"], 1))
    assert [t["tuples"][0]["symbol"] for t in codes_of(pa, TUPLES_EVENT)] == ["pa's"]
    assert [(t["output"], t["tuples"][0]["symbol"]) for t in codes_of(sc, TUPLES_EVENT)] == [
        (out, "sc's")
    ]
    # the variant is asked for again while sc reads it here
    holder.answers.append((200, {"output": out, "route": routed}))
    Keepalive(svc, 60).tick()
    assert holder.asked.get(timeout=5)[1] == f"/api/v1/outputs/{out}/variant"

    # a second socket of sc's resumes from a position: the variant, then the holder's page of
    # the variant's log (read as sc), then live batches
    sc2 = socketio_of(app).test_client(app, auth={"token": auth.token("sc")})
    page = {"output": out, "from": 0, "oldest": 0, "log": "log", "tuples": [{"symbol": "logged"}]}
    page["next"] = 1
    holder.answers += [(200, {"output": out, "route": routed}), (200, page)]
    holder.answers.append((200, {**page, "from": 1, "tuples": []}))
    ack = sc2.emit("subscribe", {"output": out, "from": 0}, callback=True)
    assert ack == {"subscribed": out, "replayed_to": 1}
    paths = [holder.asked.get(timeout=5)[:2] for _ in range(3)]
    assert paths[0] == ("POST", f"/api/v1/outputs/{out}/variant")
    assert [p for _, p in paths[1:]] == [
        f"/api/v1/outputs/{out}/results?from={at}&limit=1000" for at in (0, 1)
    ]
    svc.delivery.on_batch(routed, positioned(["sc's next"], 2))
    assert [t["tuples"][0]["symbol"] for t in codes_of(sc2, TUPLES_EVENT)] == [
        "logged",
        "sc's next",
    ]

    # a batch of another rewrite than pa's ends pa's subscription
    svc.delivery.adopt(out, labels, "strong", "another", out)
    svc.delivery.on_batch(out, positioned(["elsewhere"], 2))
    assert codes_of(pa, ENDED_EVENT) == ["REWRITE_CHANGED"]
    assert pa.emit("subscribe", {"output": out}, callback=True) == {"subscribed": out}
    # pa's attributes change: its rewrite is not the batch's any more, so the next ends it
    answer = client.put(
        "/api/v1/policies/users/pa",
        json={"attributes": {**PORT_BOX, "west": 103.0}},
        headers=auth.headers("joe"),
    )
    assert answer.status_code == 200, answer.get_json()
    svc.delivery.adopt(out, labels, "strong", key, out)
    svc.delivery.on_batch(out, positioned(["not pa's"], 3))
    events = [e["name"] for e in pa.get_received() if e["name"] != "catalog_changed"]
    assert events == [ENDED_EVENT]


def test_with_no_holder_a_standby_refuses_what_needs_the_runtime(app, auth):
    sock = socketio_of(app).test_client(app, auth={"token": auth.token("al")})
    answer = sock.emit("subscribe", {"output": "out1", "from": 0}, callback=True)
    assert answer["error"]["code"] == "RUNTIME_UNAVAILABLE"
    sock = socketio_of(app).test_client(app, auth={"token": auth.token("ed")})
    answer = sock.emit("ingest", {"stream": "feed", "tuples": [{"x": 1}]}, callback=True)
    assert answer["error"]["code"] == "RUNTIME_UNAVAILABLE"


def test_a_request_passed_on_once_is_not_passed_on_again(holder, client, auth):
    headers = {**auth.headers("ed"), FORWARDED: "1"}
    answer = client.post("/api/v1/streams/feed/tuples", json=[{"x": 1}], headers=headers)
    assert answer.status_code == 503
    assert answer.get_json()["error"]["code"] == "RUNTIME_UNAVAILABLE"
    assert holder.asked.empty()
