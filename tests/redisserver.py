"""A throwaway Redis for the tests: Debian's ``redis-server`` on a free loopback port, in a
temporary directory, without persistence. One serves the whole pytest session; each test that
uses it starts from an empty database.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import redis

APT_PACKAGE = "redis-server"


def missing_message() -> str:
    return (
        "redis-server was not found on PATH; the shared-limits tests need it: install Debian's "
        f"`{APT_PACKAGE}` package (apt-get install -y {APT_PACKAGE}; .ci/run does)"
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RedisServer:
    def __init__(self, binary: str) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="sluice-redis-"))
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.root),
                "--save",
                "",
                "--appendonly",
                "no",
                "--logfile",
                str(self.root / "redis.log"),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.client = redis.Redis.from_url(self.url)

    def wait_ready(self, timeout: float = 10.0) -> None:
        """Poll PING until the server answers (it gives no other signal of being ready)."""
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                log = (self.root / "redis.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"redis-server exited with {self.process.returncode}: {log}")
            try:
                self.client.ping()
                return
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)  # poll: the server says nothing until it accepts

    def stop(self) -> None:
        self.client.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.root, ignore_errors=True)


def start() -> RedisServer:
    server = RedisServer(shutil.which("redis-server") or "redis-server")
    try:
        server.wait_ready()
    except BaseException:
        server.stop()
        raise
    return server
