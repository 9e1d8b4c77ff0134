"""Soak: one ``sluice serve`` under 100 socket.io subscribers and 10 senders with permission churn.

``python -m bench.soak [--minutes 10] [--subscribers 100] [--senders 10] [--rate 200]`` (or
``make soak``) starts the real server as ``sluice serve`` does in production, in a process of
its own, so its memory is measured alone. Ten input streams feed one diagram (a union and a
filter); each sender appends ``rate`` tuples a second to its stream over socket.io; each
subscriber belongs to one of ten roles, and every second a churn thread grants or revokes one
role's READ_TUPLE on one stream. Every tuple carries its send time, so a subscriber's receipt
gives the end-to-end latency (same clock). Reported: tuples sent and delivered, p50/p99
latency, dropped batches (the server's own count), and the server's memory (RSS of its whole
process tree, JVM included) after warm-up and at the end; a soak is healthy when memory is
flat, nothing is dropped, and latency holds.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests
import socketio
import yaml

from bench.proctree import tree_rss_bytes
from bench.report import Goal, Row, table, write

PASSWORD = "soak benchmark password"
ROLES = [f"SOAK{i}" for i in range(10)]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Served:
    """``sluice serve`` in its own process group, with an administrator ``joe``."""

    def __init__(self, root: Path, start_limit: float = 300, **settings) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = root / "sluice.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "data_dir": str(root / "data"),
                    "port": self.port,
                    "bcrypt_rounds": 4,
                    "secret_key": secrets.token_hex(32),
                    "admin_user": "joe",
                    "admin_password": PASSWORD,
                    "ingest_tuples_per_second": 10_000_000,
                    "login_attempts_per_minute": 1000,
                    **settings,
                }
            )
        )
        self.log = open(root / "server.log", "ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "server.cli.main", "serve", "--config", str(config)],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + start_limit
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited; see {root / 'server.log'}")
            try:
                if requests.get(f"{self.url}/api/v1/openapi.json", timeout=2).ok:
                    break
            except (requests.ConnectionError, requests.Timeout):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start in {start_limit:.0f} s")
            time.sleep(0.2)

    def login(self, user: str, password: str = PASSWORD) -> str:
        answer = requests.post(
            f"{self.url}/api/v1/auth/login", json={"user": user, "password": password}, timeout=30
        )
        answer.raise_for_status()
        return answer.json()["token"]

    def stop(self) -> None:
        os.killpg(self.process.pid, 15)
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, 9)
            self.process.wait()
        self.log.close()


class Api:
    def __init__(self, url: str, token: str) -> None:
        self.url, self.headers = url, {"Authorization": f"Bearer {token}"}

    def call(self, method: str, path: str, body=None) -> dict:
        answer = requests.request(
            method, f"{self.url}/api/v1{path}", json=body, headers=self.headers, timeout=120
        )
        if not answer.ok:
            raise RuntimeError(f"{method} {path}: {answer.status_code} {answer.text[:300]}")
        return answer.json() if answer.content else {}


def build(api: Api, streams: list[str], subscribers: int) -> None:
    api.call(
        "POST",
        "/schemas",
        {"name": "s", "fields": {"sender": "long", "n": "long", "sent": "double"}},
    )
    for stream in streams:
        api.call("POST", "/streams", {"name": stream, "schema": "s"})
    for role in ROLES:
        api.call("POST", "/roles", {"name": role})
    for i in range(subscribers):
        api.call(
            "POST",
            "/users",
            {"name": f"sub{i}", "password": PASSWORD, "roles": [ROLES[i % len(ROLES)]]},
        )
    document = {
        "version": 1,
        "name": "soak",
        "inputs": {s: {} for s in streams},
        "boxes": {
            "all": {"type": "union", "in": streams},
            "kept": {"type": "filter", "in": "all", "where": "n >= 0"},
        },
        "outputs": {"soak_out": {"from": "kept"}},
    }
    api.call("POST", "/diagrams", {"document": document})
    for role in ROLES:
        for action in ("VIEW_OBJECT", "SUBSCRIBE"):
            api.call("PUT", f"/permissions/output/soak_out/{role}/{action}")
        for stream in streams:
            api.call("PUT", f"/permissions/stream/{stream}/{role}/READ_TUPLE")
    api.call("POST", "/diagrams/soak/deploy")


class Subscriber:
    def __init__(self, url: str, token: str) -> None:
        self.latencies: list[float] = []
        self.delivered = 0
        self.client = socketio.Client(reconnection=False)
        self.client.on("tuples", self._tuples)
        self.client.connect(url, auth={"token": token}, transports=["websocket"])
        answer = self.client.call("subscribe", {"output": "soak_out"}, timeout=60)
        if "error" in (answer or {}):
            raise RuntimeError(f"subscribe refused: {answer}")

    def _tuples(self, data: dict) -> None:
        now = time.time()
        rows = data.get("tuples", [])
        self.delivered += len(rows)
        self.latencies += [now - row["sent"] for row in rows]


def send(
    url: str,
    token: str,
    stream: str,
    sender: int,
    rate: int,
    stop: threading.Event,
    sent: list[int],
) -> None:
    """``rate`` tuples a second in ten batches, each acknowledged before the next."""
    client = socketio.Client(reconnection=False)
    client.connect(url, auth={"token": token}, transports=["websocket"])
    n, batch, tick = 0, max(1, rate // 10), time.monotonic()
    try:
        while not stop.is_set():
            rows = [{"sender": sender, "n": n + i, "sent": time.time()} for i in range(batch)]
            answer = client.call("ingest", {"stream": stream, "tuples": rows}, timeout=60)
            if answer and "error" not in answer:
                n += batch
                sent[sender] = n
            tick += 0.1
            stop.wait(max(0.0, tick - time.monotonic()))
    finally:
        client.disconnect()


def churn(api: Api, streams: list[str], stop: threading.Event, changes: list[int]) -> None:
    """Every second, flip one role's READ_TUPLE on one stream (the leak oracle's pressure)."""
    granted = {(r, s) for r in ROLES for s in streams}
    rng = random.Random(7)
    while not stop.wait(1.0):
        pair = (rng.choice(ROLES), rng.choice(streams))
        method = "DELETE" if pair in granted else "PUT"
        api.call(method, f"/permissions/stream/{pair[1]}/{pair[0]}/READ_TUPLE")
        granted ^= {pair}
        changes[0] += 1


def dropped_batches(status) -> int:
    """The server's own count of batches a slow subscriber lost, wherever the status puts it."""
    if isinstance(status, dict):
        return sum(
            v if k == "dropped_batches" and isinstance(v, int) else dropped_batches(v)
            for k, v in status.items()
        )
    if isinstance(status, list):
        return sum(dropped_batches(v) for v in status)
    return 0


def _settle(subs: list[Subscriber], quiet: float = 3.0, limit: float = 120.0) -> None:
    """Wait until no subscriber has received anything for ``quiet`` seconds: the last
    acknowledged tuples have arrived (or ``limit`` passed)."""
    deadline, last, since = time.monotonic() + limit, -1, time.monotonic()
    while time.monotonic() < deadline:
        total = sum(s.delivered for s in subs)
        if total != last:
            last, since = total, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
        time.sleep(0.2)


def run(minutes: float, subscribers: int, senders: int, rate: int) -> tuple[list, list, dict]:
    with tempfile.TemporaryDirectory(prefix="sluice-soak-") as tmp:
        served = Served(Path(tmp))
        try:
            admin = Api(served.url, served.login("joe"))
            streams = [f"feed{i}" for i in range(senders)]
            build(admin, streams, subscribers)
            subs = [Subscriber(served.url, served.login(f"sub{i}")) for i in range(subscribers)]
            stop, sent, changes = threading.Event(), [0] * senders, [0]
            workers = [
                threading.Thread(
                    target=send,
                    args=(served.url, served.login("joe"), streams[i], i, rate, stop, sent),
                )
                for i in range(senders)
            ]
            workers.append(threading.Thread(target=churn, args=(admin, streams, stop, changes)))
            for worker in workers:
                worker.start()
            stop.wait(min(60.0, minutes * 60 / 5))  # warm-up: Spark's first batches, JIT
            memory = [tree_rss_bytes(served.process.pid)]
            stop.wait(minutes * 60)
            memory.append(tree_rss_bytes(served.process.pid))
            stop.set()
            for worker in workers:
                worker.join()
            _settle(subs)
            status = admin.call("GET", "/diagrams/soak/status")
            system = admin.call("GET", "/system/status")
            latencies = sorted(x for s in subs for x in s.latencies)
            for s in subs:
                s.client.disconnect()
        finally:
            served.stop()
    delivered = sum(s.delivered for s in subs)
    p50 = statistics.median(latencies) * 1000 if latencies else float("nan")
    p99 = (
        latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000
        if latencies
        else float("nan")
    )
    dropped = dropped_batches(status)
    progress = status.get("progress") or {}
    bus = (system.get("runtime") or {}).get("listener_bus") or {}
    dropped_events = sum((bus.get("dropped_events") or {}).values())
    growth = (memory[1] - memory[0]) / memory[0]
    rows = [
        Row("soak", "tuples sent (acknowledged)", "tuples", float(sum(sent))),
        Row("soak", "tuples delivered (all subscribers)", "tuples", float(delivered)),
        Row("soak", "latency p50", "ms", p50),
        Row("soak", "latency p99", "ms", p99),
        Row("soak", "dropped batches", "batches", float(dropped)),
        Row("soak", "permission changes", "changes", float(changes[0])),
        Row("soak", "Spark listener events dropped", "events", float(dropped_events)),
        Row("soak", "diagram restarts", "restarts", float(progress.get("restarts") or 0)),
        Row("soak", "server memory after warm-up", "MiB", memory[0] / 2**20),
        Row("soak", "server memory at the end", "MiB", memory[1] / 2**20),
    ]
    goals = [
        Goal(
            "soak",
            "memory flat (end within +10% of warm-up)",
            f"{growth * 100:+.1f}%",
            growth <= 0.10,
        ),
        Goal("soak", "no dropped batches", str(dropped), dropped == 0),
        Goal(
            "soak",
            "diagram still running",
            str(progress.get("state")),
            progress.get("state") == "running",
        ),
    ]
    extra = {
        "minutes": minutes,
        "subscribers": subscribers,
        "senders": senders,
        "rate": rate,
        "memory_bytes": memory,
        "status": status,
        "system": system,
    }
    return rows, goals, extra


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.soak", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--subscribers", type=int, default=100)
    parser.add_argument("--senders", type=int, default=10)
    parser.add_argument("--rate", type=int, default=200, help="tuples a second per sender")
    args = parser.parse_args(argv)
    rows, goals, extra = run(args.minutes, args.subscribers, args.senders, args.rate)
    print(table(rows, goals))
    path = write(
        "soak",
        {
            "experiments": {
                "soak": {
                    "rows": [r.to_dict() for r in rows],
                    "goals": [vars(g) for g in goals],
                    "extra": extra,
                }
            }
        },
    )
    print(f"\nresults: {path}")
    return 0 if all(g.met for g in goals) else 1


if __name__ == "__main__":
    sys.exit(main())
