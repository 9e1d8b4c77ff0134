"""The edge's bounds on sockets that have not connected (socket.io) yet (server/edge/connecting.py).

Such a socket has shown no session, so no user's cap counts it. The edge closes one that sends
no socket.io connect in time, refuses at the engine.io handshake a client address that holds too
many at once (the TCP peer's address, over TLS too, whatever ``X-Forwarded-For`` says), and ends
a socket whose connect the app refused. The real edge on loopback against a stand-in app
(``edgekit``); the clients are raw WebSockets and python-socketio's own.
"""

from __future__ import annotations

import asyncio
import json
import ssl

import aiohttp
import pytest
import socketio
from edgekit import EdgeOnLoopback, StandInApp, accept, refuse, run_apart, self_signed
from serverkit import wait_until

from bench.fanout import Sock
from server.edge import process

HERE, OTHER = "127.0.0.1", "127.0.0.2"  # two client addresses on loopback
TOKEN = "a token the stand-in app takes"


def client_from(address: str, cert=None) -> aiohttp.ClientSession:
    """HTTP from ``address`` (the TCP peer the edge sees), trusting ``cert`` for TLS."""
    context = ssl.create_default_context(cafile=str(cert)) if cert else True
    connector = aiohttp.TCPConnector(local_addr=(address, 0), ssl=context, force_close=True)
    return aiohttp.ClientSession(connector=connector)


async def opened(
    http: aiohttp.ClientSession, url: str, **kwargs
) -> aiohttp.ClientWebSocketResponse:
    """An engine.io socket over WebSocket that sends no socket.io connect."""
    ws = await http.ws_connect(f"{url}/socket.io/?EIO=4&transport=websocket", **kwargs)
    assert (await ws.receive_str()).startswith("0")
    return ws


def test_a_socket_that_sends_no_connect_is_closed_at_the_deadline_with_its_code(paths):
    edge = EdgeOnLoopback(*paths, socket_connect_seconds=0.5)

    async def scenario() -> None:
        async with client_from(HERE) as http:
            ws = await opened(http, edge.url)
            refusal = await asyncio.wait_for(ws.receive_str(), 10)
            assert refusal.startswith("44"), refusal
            assert json.loads(refusal[2:])["data"]["error"]["code"] == "CONNECT_TIMEOUT"
            while not ws.closed:
                await asyncio.wait_for(ws.receive(), 10)  # engine.io's close, then the frame's

    try:
        run_apart(scenario())
        wait_until(lambda: edge.held() == 0, 10, "the edge to let the socket go")
    finally:
        edge.stop()


def test_a_polling_socket_that_stops_polling_is_dropped_at_the_deadline_and_holds_up_no_other(
    paths, monkeypatch
):
    """Its refusal is never read, so python-engineio's close would wait for ever."""
    monkeypatch.setattr(process, "REFUSAL_SECONDS", 0.5)
    edge = EdgeOnLoopback(*paths, socket_connect_seconds=0.5)

    async def scenario() -> None:
        async with client_from(HERE) as http:
            handshake = await http.get(f"{edge.url}/socket.io/?EIO=4&transport=polling")
            assert handshake.status == 200 and (await handshake.text()).startswith("0")
            await asyncio.to_thread(wait_until, lambda: edge.held() == 0, 10, "the drop")
            ws = await opened(http, edge.url)  # and the deadline still holds for the next
            refusal = await asyncio.wait_for(ws.receive_str(), 10)
            assert json.loads(refusal[2:])["data"]["error"]["code"] == "CONNECT_TIMEOUT"

    try:
        run_apart(scenario())
    finally:
        edge.stop()


@pytest.mark.parametrize("tls", [False, True], ids=["plain", "tls"])
def test_an_address_holding_too_many_unconnected_sockets_is_refused_at_the_handshake(
    paths, tmp_path, monkeypatch, tls
):
    cert = self_signed(tmp_path) if tls else None
    if cert:
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert[0]))  # how python-socketio trusts it
    edge = EdgeOnLoopback(*paths, tls=cert, max_connecting_per_address=2)

    def python_client_refusal() -> dict:
        """What python-socketio's client is told (over polling, the handshake's body)."""
        client = socketio.Client(reconnection=False)
        refusals: list = []
        client.on("connect_error", refusals.append)
        with pytest.raises(socketio.exceptions.ConnectionError):
            client.connect(edge.url, transports=["polling"], auth={"token": TOKEN})
        [refusal] = refusals
        return refusal

    async def scenario() -> None:
        ca = cert[0] if cert else None
        async with client_from(HERE, ca) as here, client_from(OTHER, ca) as there:
            held = [await opened(here, edge.url) for _ in range(2)]
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await opened(here, edge.url, headers={"X-Forwarded-For": OTHER})
            assert refused.value.status == 429
            refusal = await asyncio.to_thread(python_client_refusal)
            assert refusal["error"]["code"] == "TOO_MANY_CONNECTING", refusal
            assert f"address {HERE} has 2 sockets" in refusal["error"]["message"]
            # another address is not held back by this one's sockets
            await (await opened(there, edge.url)).close()
            await held.pop().close()

            async def again() -> bool:
                try:
                    held.append(await opened(here, edge.url))
                except aiohttp.WSServerHandshakeError:  # the edge has not seen the close yet
                    return False
                return True

            while not await again():
                await asyncio.sleep(0.05)  # poll: the close reaches the edge on its own time
            await asyncio.gather(*(ws.close() for ws in held))

    try:
        run_apart(scenario())
    finally:
        edge.stop()


def test_a_connect_the_app_refuses_ends_its_socket_and_one_it_accepts_counts_no_more_here(paths):
    channel, core = paths
    edge = EdgeOnLoopback(channel, core, max_connecting_per_address=1)
    answers = iter([refuse, accept])
    app = StandInApp(channel, lambda sid: next(answers)(sid))

    async def scenario() -> None:
        async with client_from(OTHER) as http:
            turned_away = Sock()
            with pytest.raises(RuntimeError, match="refused by the stand-in"):
                await turned_away.open(http, edge.url, TOKEN)
            await asyncio.to_thread(wait_until, lambda: edge.held() == 0, 10, "the socket ended")
            accepted = Sock()
            await accepted.open(http, edge.url, TOKEN)
            # connected, it is the app's to count (per user and address), no longer the edge's
            await (await opened(http, edge.url)).close()
            await accepted.close()

    try:
        run_apart(scenario())
        assert [app.environs[sid]["REMOTE_ADDR"] for sid in app.connects] == [OTHER, OTHER]
    finally:
        edge.stop()


def test_a_refused_polling_socket_that_stops_polling_holds_up_no_other_connect(paths, monkeypatch):
    """The refusal waits for its client to poll (here, for ever): the channel from the app
    goes on meanwhile."""
    monkeypatch.setattr(process, "REFUSAL_SECONDS", 60.0)
    channel, core = paths
    edge = EdgeOnLoopback(channel, core)
    answers = iter([refuse, accept])
    app = StandInApp(channel, lambda sid: next(answers)(sid))

    async def scenario() -> None:
        async with client_from(HERE) as http:
            polling = f"{edge.url}/socket.io/?EIO=4&transport=polling"
            opening = json.loads((await (await http.get(polling)).text())[1:])
            connect = "40" + json.dumps({"token": TOKEN})
            sent = await http.post(f"{polling}&sid={opening['sid']}", data=connect)
            assert sent.status == 200
            await asyncio.to_thread(wait_until, lambda: app.connects, 10, "the refused connect")
            accepted = Sock()
            await asyncio.wait_for(accepted.open(http, edge.url, TOKEN), 20)
            await accepted.close()

    try:
        run_apart(scenario())
    finally:
        edge.stop()
