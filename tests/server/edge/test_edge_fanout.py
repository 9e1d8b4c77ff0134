"""A fan-out frame written once-built to every socket (server/edge/direct.py).

The edge builds a result frame's WebSocket frame once and writes those bytes to each socket's
connection, so it negotiates no per-connection compression (a compressed frame could not be
shared); what a socket was sent before a fan-out still reaches it first.
"""

from __future__ import annotations

import asyncio
import json

import aiohttp
from edgekit import EdgeOnLoopback, StandInApp, run_apart
from serverkit import wait_until

SOCKETS = 20


async def _open(http: aiohttp.ClientSession, url: str) -> aiohttp.ClientWebSocketResponse:
    """A raw socket.io client offering permessage-deflate (aiohttp's default), connected."""
    ws = await http.ws_connect(f"{url}/socket.io/?EIO=4&transport=websocket", compress=15)
    assert (await ws.receive_str()).startswith("0")
    await ws.send_str("40" + json.dumps({"token": "a token"}))
    assert (await ws.receive_str()).startswith("40")
    return ws


async def _events(ws: aiohttp.ClientWebSocketResponse, count: int) -> list:
    out = []
    while len(out) < count:
        text = await asyncio.wait_for(ws.receive_str(), 10)
        if text.startswith("42"):
            out.append(json.loads(text[2:]))
    return out


def test_a_fan_out_reaches_every_socket_uncompressed_after_what_each_was_sent_before(paths):
    channel, core = paths
    edge = EdgeOnLoopback(channel, core)
    app = StandInApp(channel)
    tuples = ["tuples", {"output": "o", "tuples": [{"n": i} for i in range(50)], "next": 50}]

    async def run() -> None:
        async with aiohttp.ClientSession() as http:
            sockets = [await _open(http, edge.url) for _ in range(SOCKETS)]
            wait_until(lambda: len(app.connects) == SOCKETS, 10, "the connects")
            assert all(ws.compress == 0 for ws in sockets), "a connection negotiated deflate"
            for sid in app.connects:
                policy = '2["policy",{"output":"o","roles":["R"]}]'
                app.send({"op": "send", "sid": sid, "data": policy})
            data = "2" + json.dumps(tuples, separators=(",", ":"))
            app.send({"op": "fanout", "sids": app.connects, "data": data, "output": "o"})
            got = await asyncio.gather(*(_events(ws, 2) for ws in sockets))
            assert all(
                events == [["policy", {"output": "o", "roles": ["R"]}], tuples] for events in got
            )
            assert edge.edge.queued["o"] == 0 and edge.edge.dropped["o"] == 0
            for ws in sockets:
                await ws.close()

    try:
        run_apart(run())
    finally:
        edge.stop()
