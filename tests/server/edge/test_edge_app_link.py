"""The app's side of the channel (server/edge/link.py), with the test as the edge process.

python-socketio answers a socket.io connect before it counts the socket as connected, and a
client may send an event the moment it reads that answer (``serverkit.Client`` subscribes in its
``connect`` handler). The event must wait for the connect, not find the socket "not connected"
and be dropped without an answer: on a loaded machine that lost a demo subscriber's subscribe.
"""

from __future__ import annotations

import socket
import threading

import socketio

from server.edge import frames, link


def _next_sent(edge: socket.socket, prefix: str) -> str:
    """The data of the next frame the app sends to a socket that starts with ``prefix``."""
    edge.settimeout(10)
    try:
        while (frame := frames.read(edge)) is not None:
            if frame["op"] == "send" and str(frame["data"]).startswith(prefix):
                return frame["data"]
    except TimeoutError:
        pass
    raise AssertionError(f"the app sent no packet starting {prefix!r}")


def test_an_event_sent_on_the_connects_answer_is_answered(tmp_path):
    server = socketio.Server(async_mode="threading")
    server.on("connect", lambda sid, environ, auth: True)
    server.on("subscribe", lambda sid, output: {"subscribed": output})
    channel = str(tmp_path / "edge.sock")
    link.attach(server, channel, app=None, threads=2)
    # Hold open the window between the connect's answer and the socket counted as connected
    # until the event has been handled (or for a second, if it is made to wait for the connect).
    handled, handle_event, connect = threading.Event(), server._handle_event, server.manager.connect

    def handling(*args):
        handle_event(*args)
        handled.set()

    def late(sid, namespace):
        handled.wait(1)
        return connect(sid, namespace)

    server._handle_event = handling
    server.manager.connect = late
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as edge:
        edge.connect(channel)
        edge.sendall(frames.pack({"op": "connect", "sid": "s", "environ": {}}))
        edge.sendall(frames.pack({"op": "message", "sid": "s", "data": "0"}))
        _next_sent(edge, "0{")  # the connect's answer
        edge.sendall(frames.pack({"op": "message", "sid": "s", "data": '21["subscribe","out1"]'}))
        assert _next_sent(edge, "31") == '31[{"subscribed":"out1"}]'
