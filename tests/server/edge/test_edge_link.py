"""The edge process's side of the channel (server/edge/process.py), against a stand-in app.

Right after a server (or a new gunicorn worker) starts, the edge already answers REST through
its proxy while its channel to the app is still being opened: a socket.io connect sent then
must wait for the app, not vanish. The edge here is the real one on a loopback port; the app is
a Unix socket the test listens on late, answering frames as ``server.edge.link`` does.
"""

from __future__ import annotations

import threading

import pytest
import socketio
from edgekit import EdgeOnLoopback, StandInApp
from serverkit import wait_until

from server.edge import process

TOKEN = "a token the stand-in app takes"


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
        wait_until(lambda: sockets and not set(sockets) & set(environs), 10, "the connect")
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
        # python-socketio's client sometimes waits out wait_timeout after a refusal (the edge
        # ends the socket right after it, and the client's disconnect handling can race its
        # connect's check: 3 of 20 runs waited the full 30 s, before and after merging): 5 s
        with pytest.raises(socketio.exceptions.ConnectionError):
            client.connect(
                edge.url, auth={"token": TOKEN}, transports=["websocket"], wait_timeout=5
            )
        [refusal] = refusals
        assert refusal["data"]["error"]["code"] == "UNAVAILABLE", refusal
    finally:
        client.disconnect()
        edge.stop()
