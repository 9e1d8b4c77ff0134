"""``sluice serve --demo`` in a real process, killed mid-stream and started again: the demo
comes up with live results, q1 resumes from its checkpoint, Al's socket reconnects and carries
on, and every tuple the server acknowledged is counted in q1's results exactly once."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from datetime import datetime, timezone

import pytest
import yaml

from serverkit import Client, wait_until

STARTUP = 180


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``sluice serve`` as a child process in its own process group (Spark's JVM included)."""

    def __init__(self, config, log_path) -> None:
        self.config, self.log_path = config, log_path
        self.process = None

    def start(self, url: str) -> None:
        import requests

        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "server.cli", "serve", "--demo", "--config", str(self.config)],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

        def up() -> bool:
            assert self.process.poll() is None, open(self.log_path).read()[-3000:]
            try:
                return requests.get(f"{url}/api/v1/openapi.json", timeout=2).ok
            except requests.ConnectionError:
                return False

        wait_until(up, STARTUP, "the server to start")

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


@pytest.fixture
def server(tmp_path):
    port = free_port()
    config = tmp_path / "sluice.yaml"
    config.write_text(yaml.safe_dump({"data_dir": str(tmp_path / "data"), "port": port,
                                      "bcrypt_rounds": 4, "spark_master": "local[2]"}))
    proc = Server(config, tmp_path / "server.log")
    proc.url = f"http://127.0.0.1:{port}"
    proc.data = tmp_path / "data"
    yield proc
    if proc.process is not None and proc.process.poll() is None:
        proc.kill()


def send_acked(ed: Client, count: int) -> int:
    """Send ``count`` ACK tuples on in1, one request each; return how many were acknowledged."""
    acked = 0
    for _ in range(count):
        now = datetime.now(timezone.utc).isoformat()
        ack = ed.call("POST", "/streams/in1/tuples",
                      json=[{"time": now, "symbol": "ACK", "price": 1.0}])
        acked += ack["count"]
    return acked


def counted(al: Client) -> int:
    """ACK tuples counted in q1's results, from the socket and the recent-results cache."""
    windows = {t["window_start"]: t["n"] for t in al.received if t["symbol"] == "ACK"}
    for t in al.call("GET", "/outputs/out1/recent")["tuples"]:
        if t["symbol"] == "ACK":
            windows[t["window_start"]] = t["n"]
    return sum(windows.values())


def test_restart_mid_stream(server):
    server.start(server.url)
    logins = json.loads((server.data / "demo_logins.json").read_text())
    al = Client(server.url, "al", logins["al"])
    al.connect(resubscribe=["out1"])
    wait_until(lambda: any(t["_sources"] == ["in1", "in2"] for t in al.received), 120,
               "live demo results labelled {in1, in2}")
    assert {tuple(t["_sources"]) for t in al.received} <= {("in1",), ("in2",), ("in1", "in2")}

    ed = Client(server.url, "ed", logins["ed"])
    acked = send_acked(ed, 20)
    server.kill()
    before = len(al.received)
    server.start(server.url)
    assert al.call("GET", "/diagrams/q1/status")["status"] == "running"
    acked += send_acked(ed, 20)
    wait_until(lambda: counted(al) >= acked, 120, "every acknowledged tuple in the results")
    assert counted(al) == acked
    wait_until(lambda: len(al.received) > before, 60, "results on the reconnected socket")
    al.close()
