"""A fan-out frame written once-built to every socket (server/edge/direct.py).

The edge builds a result frame's WebSocket frame once and writes those bytes to each socket's
connection, so it negotiates no per-connection compression (a compressed frame could not be
shared); what a socket was sent before a fan-out still reaches it first.
"""

from __future__ import annotations

import asyncio
import json
import time

import aiohttp
from edgekit import EdgeOnLoopback, StandInApp, run_apart
from serverkit import wait_until

from server.edge import process

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


def _with_sockets(paths, scenario) -> None:
    """``scenario(edge, app, sockets)`` against the real edge and a stand-in app, with
    ``SOCKETS`` sockets connected (``app.connects`` lists them in the same order)."""
    channel, core = paths
    edge = EdgeOnLoopback(channel, core)
    app = StandInApp(channel)

    async def run() -> None:
        async with aiohttp.ClientSession() as http:
            sockets = [await _open(http, edge.url) for _ in range(SOCKETS)]
            wait_until(lambda: len(app.connects) == SOCKETS, 10, "the connects")
            await scenario(edge, app, sockets)
            for ws in sockets:
                await ws.close()

    try:
        run_apart(run())
    finally:
        edge.stop()


def test_a_fan_out_reaches_every_socket_uncompressed_after_what_each_was_sent_before(paths):
    tuples = ["tuples", {"output": "o", "tuples": [{"n": i} for i in range(50)], "next": 50}]

    async def scenario(edge, app, sockets) -> None:
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

    _with_sockets(paths, scenario)


def _tuples(first: int, count: int, batch: int) -> list:
    rows = [{"n": n} for n in range(first, first + count)]
    return ["tuples", {"output": "o", "tuples": rows, "batch": batch, "next": first + count}]


def _result(sids: list[str], event: list) -> dict:
    data = "2" + json.dumps(event, separators=(",", ":"))
    return {"op": "fanout", "sids": sids, "data": data, "output": "o"}


def test_result_frames_that_wait_together_reach_each_audience_as_one_event_in_order(paths):
    """Two audiences' batches wait on the channel together (as behind a write to thousands of
    sockets): each audience's consecutive batches arrive as one event, their tuples in order
    with the last one's position, and a ``policy`` event between batches keeps its place."""

    async def scenario(edge, app, sockets) -> None:
        by_sid = dict(zip(app.connects, sockets, strict=True))
        a, b = app.connects[: SOCKETS // 2], app.connects[SOCKETS // 2 :]
        policy = ["policy", {"output": "o", "roles": ["R"]}]
        policy_frame = {"op": "fanout", "sids": a, "output": None}
        policy_frame["data"] = "2" + json.dumps(policy, separators=(",", ":"))
        app.send_together(
            [
                _result(a, _tuples(0, 3, 1)),
                _result(b, _tuples(0, 2, 1)),
                _result(a, _tuples(3, 4, 2)),
                _result(b, _tuples(2, 1, 2)),
                policy_frame,
                _result(a, _tuples(7, 1, 3)),
                _result(b, _tuples(3, 5, 3)),
            ]
        )
        got_a = await asyncio.gather(*(_events(by_sid[sid], 3) for sid in a))
        got_b = await asyncio.gather(*(_events(by_sid[sid], 2) for sid in b))
        assert all(events == [_tuples(0, 7, 2), policy, _tuples(7, 1, 3)] for events in got_a)
        assert all(events == [_tuples(0, 3, 2), _tuples(3, 5, 3)] for events in got_b)

    _with_sockets(paths, scenario)


def test_after_writing_results_the_edge_pauses_so_the_next_ones_merge_but_no_other_frame_waits(
    paths, monkeypatch
):
    """Results that arrive while the edge pauses after a write (here 1.5 s) leave as one
    event; a frame that is not a result's (an ack, a close) ends the pause at once."""
    monkeypatch.setattr(process, "MAX_PAUSE_SECONDS", 1.5)

    async def scenario(edge, app, sockets) -> None:
        edge.edge.pause_per_writing = 1e6  # any write pauses the longest
        app.send(_result(app.connects, _tuples(0, 1, 1)))
        first = await asyncio.gather(*(_events(ws, 1) for ws in sockets))
        assert all(events == [_tuples(0, 1, 1)] for events in first)
        app.send(_result(app.connects, _tuples(1, 2, 2)))  # each its own write, both
        app.send(_result(app.connects, _tuples(3, 1, 3)))  # within the pause
        merged = await asyncio.gather(*(_events(ws, 1) for ws in sockets))
        assert all(events == [_tuples(1, 3, 3)] for events in merged)
        started = time.monotonic()
        policy = '2["policy",{"output":"o","roles":["R"]}]'
        app.send({"op": "send", "sid": app.connects[0], "data": policy})
        assert await _events(sockets[0], 1) == [["policy", {"output": "o", "roles": ["R"]}]]
        assert time.monotonic() - started < 1.0, "a frame not a result's waited the pause"

    _with_sockets(paths, scenario)
