"""End to end on a live server: sustained durable ingestion over REST, and the latency from
an acknowledged append to its receipt by a real socket.io subscriber.

The server is the real app (catalog, guard, runtime with Spark, delivery with SecFilter) on a
loopback port, sharing the bench's SparkSession. Ingestion goes to a stream no diagram reads,
so its rate is the ingestion path's own ceiling (HTTP, WRITE check, JSON, group-committed
log); latency is measured one tuple at a time, at varying phases of the trigger cycle,
through a diagram ``in1 -> filter -> out`` the subscriber reads.
"""

from __future__ import annotations

import logging
import secrets
import statistics
import tempfile
import threading
import time
from pathlib import Path

from bench import spark_batch
from bench.harness import Mode, repeat
from bench.report import Goal, Result, Row

NAME = "end to end"
PASSWORD = "benchmark password"
SCHEMA = {"name": "s", "fields": spark_batch.FIELDS}
DIAGRAM = {
    "version": 1,
    "name": "lat",
    "inputs": {"in1": {}},
    "boxes": {"kept": {"type": "filter", "in": "in1", "where": "price >= 0"}},
    "outputs": {"out": {"from": "kept"}},
}
GOAL_RATE, GOAL_P50_MS, GOAL_P99_MS = 100_000, 200, 500


class Server:
    """The app on Werkzeug's threaded server (what ``sluice serve`` runs) in this process."""

    def __init__(self, data_dir: Path) -> None:
        from werkzeug.serving import make_server

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # not a line per request

        from server.app import create_app
        from server.control.diagrams import start_runtime
        from server.runtime import Runtime

        self.app = create_app(
            {
                "data_dir": str(data_dir),
                "runtime": False,
                "bcrypt_rounds": 4,
                "secret_key": secrets.token_hex(32),
                "admin_user": "joe",
                "admin_password": PASSWORD,
                "ingest_tuples_per_second": 100_000_000,
            }
        )
        start_runtime(
            self.app.extensions["sluice"],
            Runtime(data_dir / "runtime", session=spark_batch.session()),
        )
        self._server = make_server("127.0.0.1", 0, self.app, threaded=True)
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        from server.app import close_app

        self._server.shutdown()
        self._thread.join()
        close_app(self.app)


def session(url: str):
    import requests

    http = requests.Session()
    answer = http.post(f"{url}/api/v1/auth/login", json={"user": "joe", "password": PASSWORD})
    answer.raise_for_status()
    http.headers["Authorization"] = f"Bearer {answer.json()['token']}"
    return http


def prepare(url: str):
    http = session(url)
    for path, body in (
        ("/schemas", SCHEMA),
        ("/streams", {"name": "in1", "schema": "s"}),
        ("/streams", {"name": "bulk", "schema": "s"}),
        ("/diagrams", {"document": DIAGRAM}),
        ("/diagrams/lat/deploy", None),
    ):
        http.post(f"{url}/api/v1{path}", json=body, timeout=300).raise_for_status()
    return http


def ingestion_rate(url: str, seconds: float, senders: int = 4, batch: int = 5000) -> float:
    """Tuples a second acknowledged by ``senders`` HTTP clients posting batches for ``seconds``."""
    tuples = [{"x": i, "price": 1.5, "symbol": "IBM"} for i in range(batch)]
    acked = [0] * senders

    def send(k: int) -> None:
        http = session(url)
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            http.post(
                f"{url}/api/v1/streams/bulk/tuples", json=tuples, timeout=60
            ).raise_for_status()
            acked[k] += batch

    start = time.perf_counter()
    pool = [threading.Thread(target=send, args=(k,)) for k in range(senders)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return sum(acked) / (time.perf_counter() - start)


def latencies(url: str, http, samples: int) -> list[float]:
    """Milliseconds from the HTTP acknowledgement of a one-tuple append to its receipt."""
    import socketio

    arrived: dict[int, float] = {}
    got = threading.Condition()

    def on_tuples(data) -> None:
        now = time.perf_counter()
        with got:
            for t in data["tuples"]:
                arrived.setdefault(t["x"], now)
            got.notify_all()

    sock = socketio.Client()
    sock.on("tuples", on_tuples)
    sock.connect(
        url,
        auth={"token": http.headers["Authorization"].split()[1]},
        transports=["websocket"],
        wait_timeout=30,
    )
    try:
        answer = sock.call("subscribe", {"output": "out"}, timeout=60)
        assert answer == {"subscribed": "out"}, answer
        acked: dict[int, float] = {}
        for x in range(samples + 5):  # the first few wait out the query's first batches
            http.post(
                f"{url}/api/v1/streams/in1/tuples",
                json=[{"x": x, "price": 1.0, "symbol": "IBM"}],
                timeout=60,
            ).raise_for_status()
            acked[x] = time.perf_counter()
            with got:
                got.wait_for(lambda: x in arrived, timeout=60)
            time.sleep(0.05 + (x % 7) * 0.03)
    finally:
        sock.disconnect()
    return sorted(1e3 * (arrived[x] - acked[x]) for x in list(acked)[5:] if x in arrived)


def run(mode: Mode) -> Result:
    seconds = mode.pick(5, 20, least=1)
    reps, samples = mode.pick(3, 5, least=1), mode.pick(60, 300, least=1)
    result = Result()
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp))
        try:
            http = prepare(server.url)
            rates = repeat(lambda: ingestion_rate(server.url, seconds), reps, mode.warmup(1))
            lat = latencies(server.url, http, samples)
            result.extra["progress"] = server.app.extensions["sluice"].runtime.status("lat")
        finally:
            server.close()
    rate = statistics.median(rates)
    p50, p99 = lat[len(lat) // 2], lat[int(0.99 * (len(lat) - 1))]
    result.rows += [
        Row(
            NAME, f"REST ingestion, durable ({min(rates):,.0f}-{max(rates):,.0f})", "tuples/s", rate
        ),
        Row(NAME, f"append ack -> socket.io receipt, p50 of {len(lat)}", "ms", p50),
        Row(NAME, f"append ack -> socket.io receipt, p99 of {len(lat)}", "ms", p99),
    ]
    result.goals += [
        Goal(
            NAME,
            f"durable ingestion >= {GOAL_RATE:,} tuples/s",
            f"{rate:,.0f} tuples/s",
            rate >= GOAL_RATE,
        ),
        Goal(NAME, f"latency p50 <= {GOAL_P50_MS} ms", f"{p50:.0f} ms", p50 <= GOAL_P50_MS),
        Goal(NAME, f"latency p99 <= {GOAL_P99_MS} ms", f"{p99:.0f} ms", p99 <= GOAL_P99_MS),
    ]
    return result
