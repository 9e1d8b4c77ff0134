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
import time

import numpy as np
import pyarrow as pa
import redis
import requests
from serverkit import build_world, wait_until

from bench.fanout import Sock, open_many, raise_fd_limit, session
from boxes.secfilter import label_array
from catalog import Action, Catalog, ObjectType
from server.realtime.delivery import Labels
from server.realtime.relay import CHANNEL, encode
from server.runtime.outputs import BATCH_KEY, NEXT_KEY

SOCKETS = 600  # more than server_threads (256), the old transport's ceiling
READERS = {"ONE": ("in1",), "BOTH": ("in1", "in2")}
PASSWORD = "edge test password"


def seeded(data) -> dict[str, int]:
    """The paper's world with a user per reader role; each input's catalog source."""
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
        snapshot = cat.core.snapshot
        return {s: snapshot.find(ObjectType.STREAM, s).source_index for s in ("in1", "in2")}
    finally:
        cat.close()


def batch() -> pa.Table:
    """Rows ``a`` from in1 and ``b`` from in2 (label bits 1 and 2), at positions 0..2."""
    bits = np.array([1, 2, 1], np.uint64)
    table = pa.table({"symbol": ["a1", "b", "a2"], "_label": label_array([bits])})
    return table.replace_schema_metadata({BATCH_KEY: b"0", NEXT_KEY: b"3"})


def login(url: str, user: str) -> str:
    answer = requests.post(
        f"{url}/api/v1/auth/login", json={"user": user, "password": PASSWORD}, timeout=30
    )
    answer.raise_for_status()
    return answer.json()["token"]


class Reader(Sock):
    def __init__(self) -> None:
        super().__init__(lambda sock, data: self.rows.extend(data["tuples"]))
        self.rows: list[dict] = []


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

            labels = Labels(("in1", "in2"), sources)
            message = encode("out1", batch(), labels, "strong", None, "out1")
            redis.Redis.from_url(redis_url).publish(CHANNEL + "out1", message)
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

    asyncio.run(scenario())


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

    asyncio.run(scenario())
