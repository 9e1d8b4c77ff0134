"""The edge process's side of the channel (server/edge/process.py), against a stand-in app.

Right after a server (or a new gunicorn worker) starts, the edge already answers REST through
its proxy while its channel to the app is still being opened: a socket.io connect sent then
must wait for the app, not vanish. The edge here is the real one on a loopback port; the app is
a Unix socket the test listens on late, answering frames as ``server.edge.link`` does.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading

import pytest
import socketio
from aiohttp import web

from server.edge import frames, process
from server.settings.config import Settings

TOKEN = "a token the stand-in app takes"


class EdgeOnLoopback:
    """``process.build``'s aiohttp app served in a thread with its own event loop."""

    def __init__(self, channel: str, core: str) -> None:
        self.app, self.edge = process.build(Settings(), core, channel)
        self.loop = asyncio.new_event_loop()
        self.runner = web.AppRunner(self.app)
        self.loop.run_until_complete(self.runner.setup())
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        port = self.runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)


class StandInApp:
    """Listens on the channel and accepts every socket.io connect it is sent."""

    def __init__(self, channel: str) -> None:
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(channel)
        self.listener.listen()
        self.connects: list[str] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        while (frame := frames.read(conn)) is not None:
            data = frame.get("data")
            if frame["op"] == "message" and isinstance(data, str) and data.startswith("0"):
                self.connects.append(frame["sid"])
                ack = "0" + json.dumps({"sid": f"app-{frame['sid']}"})
                conn.sendall(frames.pack({"op": "send", "sid": frame["sid"], "data": ack}))


@pytest.fixture
def paths(tmp_path):
    return str(tmp_path / "edge.sock"), str(tmp_path / "app.sock")


def test_a_connect_sent_before_the_app_links_up_waits_for_it(paths):
    channel, core = paths
    edge = EdgeOnLoopback(channel, core)
    client = socketio.Client(reconnection=False)
    try:
        connecting = threading.Thread(
            target=client.connect,
            args=(edge.url,),
            kwargs={"auth": {"token": TOKEN}, "transports": ["websocket"], "wait_timeout": 30},
        )
        connecting.start()
        # the socket.io connect reached the edge (its environ taken) with no app behind it
        sockets, environs = edge.edge.engine.sockets, edge.edge._environ
        assert _eventually(lambda: sockets and not set(sockets) & set(environs))
        app = StandInApp(channel)
        connecting.join(40)
        assert client.connected, "the connect sent before the app listened was lost"
        assert len(app.connects) == 1
    finally:
        client.disconnect()
        edge.stop()


def test_a_connect_is_refused_with_unavailable_when_the_app_never_links_up(paths, monkeypatch):
    monkeypatch.setattr(process, "LINK_WAIT_SECONDS", 0.5)
    channel, core = paths
    edge = EdgeOnLoopback(channel, core)
    client = socketio.Client(reconnection=False)
    refusals: list = []
    client.on("connect_error", refusals.append)
    try:
        with pytest.raises(socketio.exceptions.ConnectionError):
            client.connect(
                edge.url, auth={"token": TOKEN}, transports=["websocket"], wait_timeout=30
            )
        [refusal] = refusals
        assert refusal["data"]["error"]["code"] == "UNAVAILABLE", refusal
    finally:
        client.disconnect()
        edge.stop()


def _eventually(condition, seconds: float = 10) -> bool:
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return False
