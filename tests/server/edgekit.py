"""The edge process (server/edge/process.py) alone on a loopback port, with a stand-in app.

``EdgeOnLoopback`` serves ``process.build``'s aiohttp app (the real edge) in a thread with its own
event loop, over TLS if given a certificate (``self_signed``). ``StandInApp`` listens on the
edge's channel, late if the test likes, and answers each socket.io connect as
``server.edge.link`` would: accepted, or refused with an error.
"""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
import subprocess
import threading
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from aiohttp import web

from server.edge import frames, process
from server.settings.config import Settings


def run_apart(scenario: Coroutine[Any, Any, Any]) -> Any:
    """``asyncio.run(scenario)`` on a thread of its own: once a browser test has run in this
    process, Playwright's sync API keeps an event loop running on the main thread for the rest
    of the session, and ``asyncio.run`` refuses to start a second one there."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, scenario).result()


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, valid for a day."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        + ["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
        + ["-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    return cert, key


class EdgeOnLoopback:
    """The real edge on 127.0.0.1, its channel to the app at ``channel``."""

    def __init__(
        self, channel: str, core: str, tls: tuple[Path, Path] | None = None, **settings
    ) -> None:
        self.app, self.edge = process.build(Settings(**settings), core, channel)
        context = None
        if tls is not None:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(*tls)
        self.loop = asyncio.new_event_loop()  # run on its own thread, never on the caller's
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.runner = web.AppRunner(self.app)
        self._on_loop(self.runner.setup())
        site = web.TCPSite(self.runner, "127.0.0.1", 0, ssl_context=context)
        self._on_loop(site.start())
        port = self.runner.addresses[0][1]
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{port}"

    def _on_loop(self, step: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(step, self.loop).result(10)

    def held(self) -> int:
        """The engine.io sockets the edge holds now."""
        return len(self.edge.engine.sockets)

    def stop(self) -> None:
        self._on_loop(self.runner.cleanup())
        self.loop.call_soon_threadsafe(self.loop.stop)


def accept(sid: str) -> str:
    return "0" + json.dumps({"sid": f"app-{sid}"})


def refuse(_sid: str) -> str:
    error = {"code": "INVALID_SESSION", "message": "refused by the stand-in", "details": {}}
    return "4" + json.dumps({"message": error["message"], "data": {"error": error}})


class StandInApp:
    """Listens on the channel and answers every socket.io connect with ``answer(sid)``."""

    def __init__(self, channel: str, answer=accept) -> None:
        self.answer = answer
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(channel)
        self.listener.listen()
        self.connects: list[str] = []
        self.environs: dict[str, dict] = {}  # sid: the environ its connect came with
        threading.Thread(target=self._serve, daemon=True).start()

    def send(self, frame: dict) -> None:
        """A frame to the edge, as the app sends one (``server.edge.link``)."""
        self.conn.sendall(frames.pack(frame))

    def send_together(self, sent: list[dict]) -> None:
        """Frames to the edge in one write, as they wait on the channel while it is busy."""
        self.conn.sendall(b"".join(frames.pack(frame) for frame in sent))

    def _serve(self) -> None:
        self.conn = conn = self.listener.accept()[0]
        while (frame := frames.read(conn)) is not None:
            data = frame.get("data")
            if frame["op"] == "connect":
                self.environs[frame["sid"]] = frame["environ"]
            if frame["op"] == "message" and isinstance(data, str) and data.startswith("0"):
                self.connects.append(frame["sid"])
                answer = self.answer(frame["sid"])
                conn.sendall(frames.pack({"op": "send", "sid": frame["sid"], "data": answer}))
