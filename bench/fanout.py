"""The live edge under many sockets (issue 37): ``python -m bench.fanout`` or ``make bench-fanout``.

``idle``: N authenticated idle socket.io connections against a real ``sluice serve`` (Spark off)
in each transport: ``edge`` (the asyncio edge process, the default) and ``threads`` (gunicorn's
thread per socket, ``edge: false``, which holds at most ``server_threads``). Reported: connect
time, memory per 1,000 idle sockets (PSS of the server's process tree, before and after) and REST
p50/p99 with none open and with all open.

``fanout``: subscribers on a deployed diagram (Spark on): ten streams into a union, ten roles
reading the first 1..10 streams (ten audiences), every subscriber in one role; a sender appends
tuples carrying their send time over REST at a steady rate. Reported: send -> receipt latency
over every delivered tuple, whether every subscriber got exactly what its role may read, REST
p99 meanwhile, the edge's and this process's CPU, and where each batch's time went: the server
marks each stage of a batch in a stage log (``server.edge.stages``, ``BENCH_STAGE_LOG``), the
clients their first and last receipt, the diagram's status Spark's batch time (``STAGES``).
``--cases 1000@100`` runs one case (subscribers @ tuples/s); ``--realtime`` has the diagram ask
for Spark's real-time mode (issue 41), and stops if its output falls back to micro-batches.

The load generator is one asyncio process speaking socket.io over raw WebSockets (one shared
aiohttp session, a task per socket), on the same two cores as the server: its own CPU is in the
figures. It freezes its objects before the timed window (``gc.freeze``): one process standing for
10,000 clients would otherwise stall them all at once in its own full collections. Each run
reports ``events_per_socket_s``, the ``tuples`` events a socket received a second (batches that
waited together at the edge arrive as one: ``server.edge.merging``). Results go to
``bench/results/fanout-*.json`` and the table is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import json
import os
import resource
import tempfile
import threading
import time
from pathlib import Path

import aiohttp
import requests

from bench.proctree import command, tree, tree_cpu_seconds, tree_pss_bytes
from bench.report import write
from bench.soak import PASSWORD, Api, Served

STREAMS = [f"f{i}" for i in range(10)]
ROLES = [f"AUD{i}" for i in range(10)]  # AUDi reads f0..fi: ten audiences
CONNECT_TIMEOUT = 30.0
REST_CALLS = 200


def quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@functools.lru_cache(maxsize=64)
def decoded(text: str) -> list:
    """A socket.io event's ``[name, data]``, decoded once for all the sockets it reached (the
    same bytes go to a whole audience): this one process stands for thousands of clients, each
    of which would decode its own copy on its own CPU. Read-only."""
    return json.loads(text[2:])


class Sock:
    """One socket.io client over a raw WebSocket (engine.io 4): connect with a token, answer
    heartbeats, call events with acks, count what arrives."""

    def __init__(self, on_tuples=None) -> None:
        self.on_tuples = on_tuples
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.acks: dict[int, asyncio.Future] = {}
        self.next_ack = 0
        self.received = 0
        self.events = 0  # tuples events
        self.missed: list[dict] = []
        self._task: asyncio.Task | None = None

    async def open(self, session: aiohttp.ClientSession, url: str, token: str) -> None:
        self.ws = await session.ws_connect(
            f"{url}/socket.io/?EIO=4&transport=websocket", heartbeat=None, max_msg_size=0
        )
        opened = await self.ws.receive_str()
        if not opened.startswith("0"):
            raise RuntimeError(f"no engine.io open: {opened[:80]}")
        await self.ws.send_str("40" + json.dumps({"token": token}))
        while True:
            answer = await self.ws.receive_str()
            if answer == "2":
                await self.ws.send_str("3")
                continue
            break
        if not answer.startswith("40"):
            raise RuntimeError(f"refused: {answer[:200]}")
        self._task = asyncio.create_task(self._read())

    def stop_reading(self) -> None:
        """Read nothing more (a stalled client: its TCP window fills) until ``read_again``."""
        if self._task is not None:
            self._task.cancel()

    def read_again(self) -> None:
        self._task = asyncio.create_task(self._read())

    async def call(self, event: str, data: dict, timeout: float = 60) -> object:
        assert self.ws is not None
        self.next_ack += 1
        future = asyncio.get_running_loop().create_future()
        self.acks[self.next_ack] = future
        await self.ws.send_str(f"42{self.next_ack}" + json.dumps([event, data]))
        return await asyncio.wait_for(future, timeout)

    async def _read(self) -> None:
        assert self.ws is not None
        async for message in self.ws:
            if message.type != aiohttp.WSMsgType.TEXT:
                break
            text = message.data
            if text == "2":
                await self.ws.send_str("3")
            elif text.startswith("43"):
                head = text[2:].split("[", 1)
                future = self.acks.pop(int(head[0]), None)
                if future is not None and not future.done():
                    future.set_result(json.loads("[" + head[1])[0])
            elif text.startswith("42"):
                event, data = decoded(text)
                if event == "tuples":
                    self.received += len(data["tuples"])
                    self.events += 1
                    if self.on_tuples is not None:
                        self.on_tuples(self, data)
                elif event == "missed":
                    self.missed.append(data)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)


async def open_many(
    session: aiohttp.ClientSession, url: str, tokens: list[str], make=Sock, parallel: int = 100
) -> tuple[list[Sock], list[float], int]:
    """Open one socket per token, ``parallel`` handshakes at a time: the open ones, each one's
    connect time, and how many failed."""
    gate = asyncio.Semaphore(parallel)
    times: list[float] = []
    opened: list[Sock] = []
    failed = 0

    async def one(token: str) -> None:
        nonlocal failed
        async with gate:
            sock, start = make(), time.perf_counter()
            try:
                await asyncio.wait_for(sock.open(session, url, token), CONNECT_TIMEOUT)
            except (TimeoutError, aiohttp.ClientError, RuntimeError, OSError):
                failed += 1
                await sock.close()
                return
            times.append(time.perf_counter() - start)
            opened.append(sock)

    await asyncio.gather(*(one(token) for token in tokens))
    return opened, times, failed


def rest_latencies(url: str, token: str, calls: int = REST_CALLS) -> tuple[list[float], int]:
    """``calls`` authenticated REST reads, one after another: their times and failures."""
    http = requests.Session()
    http.headers["Authorization"] = f"Bearer {token}"
    times, failed = [], 0
    for _ in range(calls):
        start = time.perf_counter()
        try:
            http.get(f"{url}/api/v1/outputs", timeout=10).raise_for_status()
            times.append(time.perf_counter() - start)
        except requests.RequestException:
            failed += 1
    return times, failed


async def rest_meanwhile(url: str, token: str) -> tuple[list[float], int]:
    """REST from a thread, so this loop keeps answering the sockets' heartbeats."""
    return await asyncio.to_thread(rest_latencies, url, token)


def raise_fd_limit(sockets: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = min(hard, max(soft, 2 * sockets + 1024))
    resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def session() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, force_close=True))


def caps(sockets: int) -> dict:
    return {
        "max_sockets_per_user": sockets + 10,
        "max_sockets_per_address": sockets + 10,
        "max_connecting_per_address": sockets + 10,
    }


async def idle(transport: str, sockets: int) -> dict:
    """One transport under ``sockets`` idle authenticated sockets."""
    with tempfile.TemporaryDirectory() as tmp:
        served = Served(Path(tmp), runtime=False, edge=transport == "edge", **caps(sockets))
        try:
            token = served.login("joe")
            rest_none, _ = rest_latencies(served.url, token)
            before = tree_pss_bytes(served.process.pid)
            async with session() as http:
                start = time.perf_counter()
                opened, times, failed = await open_many(http, served.url, [token] * sockets)
                elapsed = time.perf_counter() - start
                await asyncio.sleep(2)  # let the server settle before weighing it
                after = tree_pss_bytes(served.process.pid)
                rest_open, rest_failed = await rest_meanwhile(served.url, token)
                await asyncio.gather(*(sock.close() for sock in opened))
        finally:
            served.stop()
    return {
        "transport": transport,
        "sockets": sockets,
        "connected": len(opened),
        "failed": failed,
        "connect_all_s": elapsed,
        "connect_p50_ms": 1000 * quantile(times, 0.5),
        "connect_p99_ms": 1000 * quantile(times, 0.99),
        "mib_per_1000": (after - before) / max(1, len(opened)) * 1000 / 2**20,
        "rest_none_p50_ms": 1000 * quantile(rest_none, 0.5),
        "rest_none_p99_ms": 1000 * quantile(rest_none, 0.99),
        "rest_open_p50_ms": 1000 * quantile(rest_open, 0.5),
        "rest_open_p99_ms": 1000 * quantile(rest_open, 0.99),
        "rest_open_failed": rest_failed,
    }


def build(api: Api, users: int, realtime: bool) -> None:
    """Ten streams, their union as one output, ten roles AUDi reading f0..fi, ``users`` users
    spread over the roles; the diagram asks for Spark's real-time mode if ``realtime``."""
    api.call("POST", "/schemas", {"name": "s", "fields": {"n": "long", "sent": "double"}})
    for stream in STREAMS:
        api.call("POST", "/streams", {"name": stream, "schema": "s"})
    document = {
        "version": 1,
        "name": "fan",
        "realtime": realtime,
        "inputs": {s: {} for s in STREAMS},
        "boxes": {"all": {"type": "union", "in": STREAMS}},
        "outputs": {"fan_out": {"from": "all"}},
    }
    api.call("POST", "/diagrams", {"document": document})
    for i, role in enumerate(ROLES):
        api.call("POST", "/roles", {"name": role})
        for action in ("VIEW_OBJECT", "SUBSCRIBE"):
            api.call("PUT", f"/permissions/output/fan_out/{role}/{action}")
        for stream in STREAMS[: i + 1]:
            api.call("PUT", f"/permissions/stream/{stream}/{role}/READ_TUPLE")
    for u in range(users):
        api.call(
            "POST", "/users", {"name": f"u{u}", "password": PASSWORD, "roles": [ROLES[u % 10]]}
        )
    api.call("POST", "/diagrams/fan/deploy")
    shown = api.call("GET", "/diagrams/fan/status")["progress"]["outputs"]["fan_out"]
    if realtime and shown["mode"] != "real-time":  # a fallback would measure micro-batches
        raise RuntimeError(f"fan_out runs in {shown['mode']}: {shown['mode_reason']}")


class Subscriber(Sock):
    def __init__(self, audience: int, latencies: list[float], batches: dict) -> None:
        super().__init__(self._arrived)
        self.audience, self.latencies, self.batches = audience, latencies, batches
        self.wrong = 0

    def _arrived(self, _sock: Sock, data: dict) -> None:
        now = time.time()
        for row in data["tuples"]:
            self.latencies.append(now - row["sent"])
            self.wrong += row["n"] % 10 > self.audience  # from a stream its role may not read
        oldest = min(row["sent"] for row in data["tuples"])
        seen = self.batches.setdefault(data["next"], {"oldest": oldest, "first": now})
        seen["oldest"], seen["last"] = min(seen["oldest"], oldest), now


# A batch's way out, in order: each stage is the time from the point before it to its own
# (the last audience's, where the batch is sent once per audience); they add up to the
# latency of the batch's oldest tuple at its last subscriber. The edge writes a frame to a
# socket as it goes through the sockets, or queues it for the socket's writer task
# (``server.edge.direct``): "last queued one written" is negative when none was queued.
STAGES = {
    "ingest + Spark + tap": "handoff",
    "decide + rows": "decided",
    "encode + channel send": "sent",
    "channel -> edge": "received",
    "edge: written, or queued": "queued",
    "edge: last queued one written": "last_write",
    "-> last client read": "last",
}


# Inside the first stage, from the diagram's status (its last batch, polled): not additive.
SPARK = {
    "  of which: Spark's batch": "batch_duration_ms",
    "  of which: newest input acked -> handoff": "latency_ms",
}


def stage_table(log: Path, batches: dict) -> dict[str, dict[str, float]]:
    """p50/p99 ms per stage (``STAGES``) over the batches the clients saw, from the server's
    stage log (``server.edge.stages``) and the clients' receipts."""
    points: dict[int, dict[str, float]] = {}
    for line in log.read_text().splitlines() if log.exists() else []:
        mark = json.loads(line)
        at = points.setdefault(mark["next"], {})
        at[mark["stage"]] = max(at.get(mark["stage"], 0.0), mark["t"])
    spans: dict[str, list[float]] = {name: [] for name in STAGES}
    spans["first client read"] = []
    for position, seen in batches.items():
        at = {**points.get(position, {}), "last": seen["last"]}
        if any(point not in at for point in STAGES.values()):
            continue
        before = seen["oldest"]
        for name, point in STAGES.items():
            spans[name].append(at[point] - before)
            before = at[point]
        spans["first client read"].append(seen["first"] - seen["oldest"])
    return {
        name: {
            "p50_ms": 1000 * quantile(times, 0.5),
            "p99_ms": 1000 * quantile(times, 0.99),
            "batches": len(times),
        }
        for name, times in spans.items()
    }


def send(url: str, token: str, per_second: int, seconds: float, stop: threading.Event) -> int:
    """``per_second`` tuples a second over the ten streams, one POST per stream a tick; the
    number sent."""
    http = requests.Session()
    http.headers["Authorization"] = f"Bearer {token}"
    ticks = max(1, min(10, per_second // 10))  # one batch a second at <= 10 tuples
    each = max(1, per_second // (ticks * len(STREAMS)))
    sent, n, tick = 0, 0, time.monotonic()
    end = tick + seconds
    while tick < end and not stop.is_set():
        for i, stream in enumerate(STREAMS):
            rows = [{"n": (n + k) * 10 + i, "sent": time.time()} for k in range(each)]
            http.post(f"{url}/api/v1/streams/{stream}/tuples", json=rows, timeout=60)
            sent += each
        n += each
        tick += 1.0 / ticks
        stop.wait(max(0.0, tick - time.monotonic()))
    return sent


def spark_batches(url: str, token: str, stop: threading.Event) -> dict[int, dict]:
    """The diagram's batches as its status shows them (polled every 0.2 s until ``stop``), by
    batch id: Spark's time for the batch (``batch_duration_ms``, its trigger's execution) and
    from the newest input tuple's acknowledgement to the handoff of its results
    (``latency_ms``)."""
    http = requests.Session()
    http.headers["Authorization"] = f"Bearer {token}"
    seen: dict[int, dict] = {}
    while not stop.wait(0.2):
        try:
            answer = http.get(f"{url}/api/v1/diagrams/fan/status", timeout=10)
        except requests.RequestException:  # REST slow under the sockets: the next poll
            continue
        progress = answer.json()["progress"]
        for out in ((progress or {}).get("outputs") or {}).values():
            if out.get("batch_id") is not None:
                seen[out["batch_id"]] = out
    return seen


async def warm_up(url: str, token: str, opened: list[Subscriber], latencies: list[float]) -> None:
    """One tuple into each stream, awaited on every socket, so the timed window starts with
    the diagram's queries running (their start is not the edge's latency); then the counts
    start again."""
    http = requests.Session()
    http.headers["Authorization"] = f"Bearer {token}"
    for i, stream in enumerate(STREAMS):
        rows = [{"n": i, "sent": time.time()}]
        http.post(f"{url}/api/v1/streams/{stream}/tuples", json=rows, timeout=60)
    deadline = time.monotonic() + 600
    while any(sock.received < sock.audience + 1 for sock in opened):
        if time.monotonic() > deadline:
            short = [sock for sock in opened if sock.received < sock.audience + 1]
            closed = sum(1 for sock in short if sock.ws is None or sock.ws.closed)
            raise RuntimeError(
                f"the warm-up tuples did not reach {len(short)} sockets in 600 s "
                f"({closed} of them closed, {sum(s.received for s in short)} tuples among them)"
            )
        await asyncio.sleep(0.5)  # poll: the sockets count what arrives
    latencies.clear()
    opened[0].batches.clear()
    for sock in opened:
        sock.received = sock.events = 0


async def fanout(
    subscribers: int, per_second: int, seconds: float, users: int, realtime: bool
) -> dict:
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        stage_log = Path(tmp) / "stages.jsonl"
        os.environ["BENCH_STAGE_LOG"] = str(stage_log)  # the server's stage marks
        served = Served(Path(tmp), **caps(subscribers))
        try:
            admin = served.login("joe")
            build(Api(served.url, admin), users, realtime)
            tokens = [served.login(f"u{u}") for u in range(users)]
            latencies: list[float] = []
            batches: dict[int, dict[str, float]] = {}
            rest_none, _ = rest_latencies(served.url, admin, 50)
            async with session() as http:
                plan = [u % users for u in range(subscribers)]
                made = iter(plan)

                def make() -> Subscriber:
                    return Subscriber(next(made) % 10, latencies, batches)

                opened, times, failed = await open_many(
                    http, served.url, [tokens[u] for u in plan], make
                )
                gate = asyncio.Semaphore(100)

                async def subscribe(sock: Sock) -> object:
                    async with gate:
                        return await sock.call("subscribe", {"output": "fan_out"})

                answers = await asyncio.gather(*(subscribe(sock) for sock in opened))
                refused = sum(1 for answer in answers if "error" in (answer or {}))
                await warm_up(served.url, admin, opened, latencies)
                edge = [p for p in tree(served.process.pid) if "server.edge" in command(p)]
                cpu_before = [tree_cpu_seconds(p) for p in edge], os.times()
                # This one process stands for 10,000 clients: its own full collections
                # (over every socket's objects, up to a second each) would stall them all at
                # once, a pause no real client population has. What exists now is frozen.
                gc.freeze()
                window = time.perf_counter()
                stop = threading.Event()
                sending = asyncio.create_task(
                    asyncio.to_thread(send, served.url, admin, per_second, seconds, stop)
                )
                watching = asyncio.create_task(
                    asyncio.to_thread(spark_batches, served.url, admin, stop)
                )
                rest_open, rest_failed = await rest_meanwhile(served.url, admin)
                sent = await sending
                stop.set()
                spark = await watching
                await asyncio.sleep(5)  # the last batch's way out
                window = time.perf_counter() - window
                edge_cpu = sum(tree_cpu_seconds(p) for p in edge) - sum(cpu_before[0])
                mine = os.times()
                own_cpu = mine.user + mine.system - cpu_before[1].user - cpu_before[1].system
                expected = sum(
                    sent // len(STREAMS) * (sock.audience + 1)  # type: ignore[attr-defined]
                    for sock in opened
                )
                got = sum(sock.received for sock in opened)
                events = sum(sock.events for sock in opened)
                wrong = sum(sock.wrong for sock in opened)  # type: ignore[attr-defined]
                missed = sum(len(sock.missed) for sock in opened)
                await asyncio.gather(*(sock.close() for sock in opened))
                gc.unfreeze()
            stages = stage_table(stage_log, batches)
            for name, key in SPARK.items():
                took = [b[key] for b in spark.values() if b.get(key) is not None]
                stages[name] = {
                    "p50_ms": quantile(took, 0.5),
                    "p99_ms": quantile(took, 0.99),
                    "batches": len(took),
                }
        finally:
            served.stop()
            os.environ.pop("BENCH_STAGE_LOG", None)
    return {
        "mode": "real-time" if realtime else "micro-batch",
        "subscribers": subscribers,
        "connected": len(opened),
        "failed": failed,
        "refused": refused,
        "tuples_per_second": per_second,
        "sent": sent,
        "expected_receipts": expected,
        "receipts": got,
        "not_allowed": wrong,
        "missed_events": missed,
        # tuples events a socket received a second, on average: batches merged at the edge
        "events_per_socket_s": events / max(1, len(opened)) / window,
        "latency_p50_ms": 1000 * quantile(latencies, 0.5),
        "latency_p99_ms": 1000 * quantile(latencies, 0.99),
        "latency_max_ms": 1000 * max(latencies, default=float("nan")),
        "connect_p99_ms": 1000 * quantile(times, 0.99),
        "rest_none_p99_ms": 1000 * quantile(rest_none, 0.99),
        "rest_open_p99_ms": 1000 * quantile(rest_open, 0.99),
        "rest_open_failed": rest_failed,
        "load_before_after": f"{load_before:.1f} -> {os.getloadavg()[0]:.1f}",
        "edge_cores": edge_cpu / window,  # the edge process's CPU over the timed window
        "load_generator_cores": own_cpu / window,
        "stages": stages,
    }


def show_stages(row: dict) -> str:
    """One fan-out run's stage table beside its end-to-end latency."""
    head = f"{row['subscribers']} subscribers, {row['tuples_per_second']} tuples/s"
    lines = [f"| {head} | p50 ms | p99 ms | batches |", "|---|---|---|---|"]
    for name, times in row["stages"].items():
        lines.append(
            f"| {name} | {times['p50_ms']:.0f} | {times['p99_ms']:.0f} | {times['batches']} |"
        )
    lines.append(
        f"| end to end, every tuple | {row['latency_p50_ms']:.0f} | {row['latency_p99_ms']:.0f} | |"
    )
    return "\n".join(lines)


def show(rows: list[dict]) -> str:
    keys = list(dict.fromkeys(key for row in rows for key in row if key != "stages"))
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for row in rows:
        cells = [
            f"{row[k]:.1f}" if isinstance(row.get(k), float) else str(row.get(k, "")) for k in keys
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["idle", "fanout"], help="one experiment")
    parser.add_argument("--sockets", default="1000,10000", help="idle sockets, comma-separated")
    parser.add_argument("--threads-sockets", type=int, default=200, help="idle, on threads")
    parser.add_argument("--subscribers", type=int, default=10_000)
    parser.add_argument("--rate-subscribers", type=int, default=1_000)
    parser.add_argument(
        "--cases", help="fan-out cases as SUBSCRIBERS@TUPLES_PER_S, e.g. 1000@100,10000@10"
    )
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each case, for spreads")
    parser.add_argument(
        "--realtime", action="store_true", help="the diagram asks for Spark's real-time mode"
    )
    args = parser.parse_args()
    counts = [int(n) for n in args.sockets.split(",")]
    raise_fd_limit(max(counts + [args.subscribers]))
    results: dict[str, list[dict]] = {}
    if args.only in (None, "idle"):
        cases = [("threads", args.threads_sockets)] + [("edge", n) for n in counts]
        rows = [asyncio.run(idle(*case)) for case in cases for _ in range(args.repeat)]
        results["idle"] = rows
        print(show(rows), flush=True)
    if args.only in (None, "fanout"):
        cases = [(args.subscribers, 10), (args.rate_subscribers, 100)]
        if args.cases:
            cases = [tuple(map(int, case.split("@"))) for case in args.cases.split(",")]
        rows = [
            asyncio.run(fanout(subscribers, rate, args.seconds, args.users, args.realtime))
            for subscribers, rate in cases
            for _ in range(args.repeat)
        ]
        results["fanout"] = rows
        print(show(rows), flush=True)
        for row in rows:
            print(show_stages(row), flush=True)
    print(f"written to {write('fanout', results)}")


if __name__ == "__main__":
    main()
