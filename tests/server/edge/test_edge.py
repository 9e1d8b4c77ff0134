"""The edge (server/edge/) under ``sluice serve``: more sockets than gunicorn's thread pool had
(256), each given exactly what its rights allow, REST answering meanwhile; the socket caps.

The server runs without Spark and takes its results from the relay on a real Redis, as a
standby does (server/realtime/relay.py): the test publishes one batch of ``out1`` (the paper's
q1, inputs in1 and in2) with rows from each input. Half the sockets belong to a reader of in1
alone, half to a reader of both. The sockets are the benchmark's own raw socket.io clients
(bench/fanout.py), a task each in one asyncio loop.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time

import numpy as np
import pyarrow as pa
import redis
import requests
import socketio
from edgekit import run_apart, self_signed
from serverkit import build_world, wait_until

from bench.fanout import Sock, open_many, raise_fd_limit, session
from bench.proctree import command, tree
from boxes.secfilter import label_array
from catalog import Action, Catalog, ObjectType
from server.realtime.delivery import Labels
from server.realtime.relay import CHANNEL, encode
from server.runtime.outputs import BATCH_KEY, LOG_KEY, NEXT_KEY

SOCKETS = 600  # more than server_threads (256), the old transport's ceiling
READERS = {"ONE": ("in1",), "BOTH": ("in1", "in2")}
PASSWORD = "edge test password"


def seeded(data) -> dict[str, int]:
    """The paper's world with a user per reader role and an administrator ``boss``; each
    input's catalog source."""
    data.mkdir()
    cat = Catalog.open(f"sqlite:///{data / 'catalog.sqlite'}", bcrypt_rounds=4)
    try:
        passwords = build_world(cat)
        joe = cat.sessions.login("joe", passwords["joe"])[1]
        al = cat.sessions.login("al", passwords["al"])[1]  # q1's owner
        for role, streams in READERS.items():
            cat.accounts.add_role(joe, role)
            cat.accounts.add_user(joe, role.lower(), PASSWORD, [role])
            for action in (Action.VIEW_OBJECT, Action.SUBSCRIBE):
                cat.grants.grant(al, role, action, ObjectType.OUTPUT, "out1")
            for stream in streams:
                cat.grants.grant(joe, role, Action.READ_TUPLE, ObjectType.STREAM, stream)
        cat.accounts.add_user(joe, "boss", PASSWORD, ["ADMIN"])
        snapshot = cat.core.snapshot
        return {s: snapshot.find(ObjectType.STREAM, s).source_index for s in ("in1", "in2")}
    finally:
        cat.close()


def batch(symbols=("a1", "b", "a2"), bits=(1, 2, 1), number: int = 0, next_: int = 3) -> pa.Table:
    """Rows from in1 (label bit 1) and in2 (bit 2), the output's batch ``number`` ending at
    position ``next_``."""
    label = label_array([np.array(bits, np.uint64)])
    table = pa.table({"symbol": list(symbols), "_label": label})
    return table.replace_schema_metadata(
        {BATCH_KEY: str(number).encode(), NEXT_KEY: str(next_).encode(), LOG_KEY: b"log"}
    )


def publish(redis_url: str, sources: dict[str, int], table: pa.Table) -> None:
    """``table`` as the runtime's holder relays a batch of ``out1``."""
    message = encode("out1", table, Labels(("in1", "in2"), sources), "strong", None, "out1")
    redis.Redis.from_url(redis_url).publish(CHANNEL + "out1", message)


def login(url: str, user: str) -> str:
    answer = requests.post(
        f"{url}/api/v1/auth/login", json={"user": user, "password": PASSWORD}, timeout=30
    )
    answer.raise_for_status()
    return answer.json()["token"]


class Reader(Sock):
    def __init__(self) -> None:
        super().__init__(self._arrived)
        self.rows: list[dict] = []
        self.nexts: list[int] = []  # each frame's position

    def _arrived(self, _sock: Sock, data: dict) -> None:
        self.rows += data["tuples"]
        self.nexts.append(data["next"])


def test_more_sockets_than_the_old_thread_pool_each_get_exactly_what_its_rights_allow(
    tmp_path, serve, redis_url
):
    sources = seeded(tmp_path / "data")
    per_user = SOCKETS // len(READERS)
    server = serve(redis_url=redis_url, runtime=False, max_sockets_per_user=per_user)
    server.start()
    tokens = {role: login(server.url, role.lower()) for role in READERS}
    raise_fd_limit(SOCKETS)

    async def scenario() -> None:
        async with session() as http:
            held = {}
            for role, token in tokens.items():
                socks, _, failed = await open_many(http, server.url, [token] * per_user, Reader)
                assert (len(socks), failed) == (per_user, 0)
                held[role] = socks
            everyone = [sock for socks in held.values() for sock in socks]
            acks = await asyncio.gather(
                *(s.call("subscribe", {"output": "out1"}) for s in everyone)
            )
            assert all(ack == {"subscribed": "out1"} for ack in acks), acks[:3]

            publish(redis_url, sources, batch())
            start = time.perf_counter()
            answer = await asyncio.to_thread(
                requests.get,
                f"{server.url}/api/v1/outputs",
                headers={"Authorization": f"Bearer {tokens['ONE']}"},
                timeout=30,
            )
            assert answer.ok and time.perf_counter() - start < 2.0, answer.text

            def arrived() -> bool:
                return all(len(s.rows) >= (2 if s in held["ONE"] else 3) for s in everyone)

            await asyncio.to_thread(wait_until, arrived, 60, "the batch on every socket")
            for role, expected in (("ONE", ["a1", "a2"]), ("BOTH", ["a1", "b", "a2"])):
                assert all([row["symbol"] for row in s.rows] == expected for s in held[role])
            await asyncio.gather(*(sock.close() for sock in everyone))

    run_apart(scenario())


def test_a_socket_beyond_a_users_cap_is_refused_with_its_code_and_one_closed_frees_a_place(
    tmp_path, serve
):
    seeded(tmp_path / "data")
    server = serve(runtime=False, max_sockets_per_user=2)
    server.start()
    token = login(server.url, "one")

    async def scenario() -> None:
        async with session() as http:
            held, _, _ = await open_many(http, server.url, [token] * 2)
            refused = Sock()
            try:
                await refused.open(http, server.url, token)
                raise AssertionError("a third socket was let in")
            except RuntimeError as err:
                assert "TOO_MANY_SOCKETS" in str(err) and "user one has 2" in str(err)
            await held.pop().close()

            async def again() -> bool:
                sock = Sock()
                try:
                    await sock.open(http, server.url, token)
                except RuntimeError:  # the server has not seen the close yet
                    return False
                held.append(sock)
                return True

            while not await again():
                await asyncio.sleep(0.05)  # poll: the close reaches the app on its own time
            await asyncio.gather(*(sock.close() for sock in held))

    run_apart(scenario())


BIG = 2_000  # rows of a big batch, ~0.5 MB encoded: a stalled socket's buffers fill in a few
BATCHES = 40


def test_a_socket_that_stops_reading_loses_its_own_frames_is_told_missed_and_delays_no_one(
    tmp_path, serve, redis_url
):
    sources = seeded(tmp_path / "data")
    server = serve(redis_url=redis_url, runtime=False, socket_queue_frames=2)
    server.start()
    token = login(server.url, "one")
    admin = requests.Session()
    admin.headers["Authorization"] = f"Bearer {login(server.url, 'boss')}"

    async def scenario() -> None:
        async with session() as http:
            (fast, slow), _, _ = await open_many(http, server.url, [token] * 2, Reader, 1)
            for sock in (fast, slow):
                assert await sock.call("subscribe", {"output": "out1"}) == {"subscribed": "out1"}
            slow.stop_reading()
            # one batch at a time, as the fast socket reads it: a burst would fill even its
            # queue of two frames, as it would any socket's
            for number in range(BATCHES):
                table = batch(["x" * 250] * BIG, [1] * BIG, number, (number + 1) * BIG)
                await asyncio.to_thread(publish, redis_url, sources, table)
                await asyncio.to_thread(
                    wait_until, lambda: len(fast.nexts) > number, 30, f"batch {number} on fast"
                )
            assert fast.nexts == [(n + 1) * BIG for n in range(BATCHES)] and not fast.missed

            def dropped() -> int:
                edge = admin.get(f"{server.url}/api/v1/system/status", timeout=30).json()["edge"]
                return edge["outputs"].get("out1", {}).get("dropped", 0)

            # the edge reports its frames to the app every second
            await asyncio.to_thread(wait_until, dropped, 10, "the edge's dropped frames of out1")

            slow.read_again()
            await asyncio.to_thread(wait_until, lambda: slow.missed, 60, "slow's missed event")
            [gap] = slow.missed
            assert gap["output"] == "out1" and gap["from"] < gap["to"]
            # each batch exactly once: given before the gap, named by it, or given after it
            lost = [n for n in fast.nexts if gap["from"] < n <= gap["to"]]
            assert sorted(slow.nexts + lost) == fast.nexts
            assert max([n for n in slow.nexts if n <= gap["from"]], default=0) == gap["from"]
            await asyncio.gather(fast.close(), slow.close())

    run_apart(scenario())


def test_an_edge_process_that_dies_is_replaced_and_the_address_answers_again(tmp_path, serve):
    server = serve(runtime=False)
    server.start()

    def edges() -> list[int]:
        return [pid for pid in tree(server.process.pid) if "-m server.edge" in command(pid)]

    [first] = edges()
    os.kill(first, signal.SIGKILL)

    def answers_again() -> bool:
        try:
            return requests.get(f"{server.url}/api/v1/openapi.json", timeout=2).ok
        except requests.RequestException:
            return False

    wait_until(lambda: edges() and edges() != [first] and answers_again(), 60, "a new edge")

    # every path reaches the app, one with an encoded newline too: the app's JSON answer,
    # not the edge's own text/plain 404
    answer = requests.get(f"{server.url}/api/v1/policies/users/a%0Ab", timeout=10)
    assert answer.headers["Content-Type"].startswith("application/json"), answer.text


def test_a_polling_clients_disconnect_ends_its_pending_long_poll_at_once(tmp_path, serve):
    """python-engineio keeps a polling socket's pending GET open until the ping's timeout (30 s)
    after the client said close, and the client's ``disconnect`` waits for that GET: the edge
    ends it when the socket closes."""
    seeded(tmp_path / "data")
    server = serve(runtime=False)
    server.start()
    http = requests.Session()
    login = http.post(f"{server.url}/api/v1/auth/login", json={"user": "one", "password": PASSWORD})
    for _ in range(3):
        client = socketio.Client(reconnection=False, http_session=http)
        client.connect(
            server.url,
            auth={"csrf": login.json()["csrf_token"]},
            headers={"Origin": server.url},
            transports=["polling"],
        )
        assert client.call("subscribe", {"output": "out1"}, timeout=30) == {"subscribed": "out1"}
        started = time.monotonic()
        client.disconnect()
        assert time.monotonic() - started < 10, "the disconnect waited for the ping's timeout"


def test_with_tls_a_browser_page_reaches_the_api_and_its_socket_at_the_one_address(
    tmp_path, serve, monkeypatch
):
    """TLS ends at the edge: the login's cookie, then a socket on it with the page's CSRF token
    and the page's https Origin (the same-origin check), over polling and WebSocket."""
    cert, key = self_signed(tmp_path)
    seeded(tmp_path / "data")
    server = serve(runtime=False, tls_cert=str(cert), tls_key=str(key))
    server.url = server.url.replace("http://", "https://")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert))  # how the kit's requests trust it
    server.start()
    http = requests.Session()
    login = http.post(f"{server.url}/api/v1/auth/login", json={"user": "one", "password": PASSWORD})
    assert login.ok and http.cookies.get("sluice_session"), login.text
    for transports in (["polling"], ["polling", "websocket"]):
        client = socketio.Client(reconnection=False, http_session=http, ssl_verify=str(cert))
        client.connect(
            server.url,
            auth={"csrf": login.json()["csrf_token"]},
            headers={"Origin": server.url},
            transports=transports,
        )
        assert client.call("subscribe", {"output": "out1"}, timeout=30) == {"subscribed": "out1"}
        client.disconnect()
