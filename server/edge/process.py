"""The edge process: sockets on asyncio, everything else passed to the app.

It answers engine.io at ``/socket.io/`` (python-engineio on aiohttp: an idle socket is a few
kilobytes and no thread) and passes every other request, as it came, to the app on its private
Unix socket (``proxy``). A socket's socket.io packets go to the app and back over the channel
(``server.edge.link``); a socket.io connect that carries neither a token nor a session cookie is
refused here, without the app. A socket that has not connected (socket.io) yet is bounded here
too, per client address and in time (``server.edge.connecting``); a refused connect ends its
socket.

Each socket's outgoing frames wait in its engine.io queue; a result frame for a socket that has
``socket_queue_frames`` waiting is dropped instead, and once the socket has room again it is
sent ``missed {output, from, to}``: read back from ``from`` (``subscribe`` with ``from``, or
``GET /outputs/NAME/results?from=``), the position after the last frame it was given of that
output. A slow reader thus loses its own frames and delays no one's.

The app's frames are read as they come and applied in order; result frames that waited
together go to each audience as one event (``server.edge.merging``), and after writing results
the edge pauses as long as the writing took, so that more can gather (``apply_frames``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import ssl
import time
from collections import Counter, deque
from collections.abc import Coroutine
from http import HTTPStatus
from typing import Any

import engineio
from aiohttp import http_exceptions, web, web_protocol
from socketio import packet as sio_packet

from boxes import codes
from boxes.errors import SluiceError, Unauthenticated
from catalog import INVALID_SESSION
from server.edge import collecting, direct, frames, merging, stages
from server.edge.connecting import Connecting
from server.edge.proxy import Proxy
from server.http.errors import answer, body, refused_connect
from server.http.refusals import SERVER_ERRORS, refusal
from server.http.security import SESSION_COOKIE
from server.settings.config import Settings

log = logging.getLogger(__name__)
MISSED = "missed"
REPORT_SECONDS = 1.0
# After writing results the edge pauses as long as the writing took (at most MAX_PAUSE_SECONDS),
# so that it spends at most half its time writing while more results wait: what arrives
# meanwhile merges (server.edge.merging), and requests and the sockets' clients get the cores.
# Measured in docs/benchmarks.md ("Merging at the edge").
PAUSE_PER_WRITING = 1.0
MAX_PAUSE_SECONDS = 0.5
CHUNK = 500  # sockets a fan-out writes to between two turns of the loop's other work
REFUSAL_SECONDS = 5.0  # how long a refused socket's client has to read the refusal
# How long a socket.io connect waits for the app's channel (a server starting, or a worker
# gunicorn is replacing) before it is refused with UNAVAILABLE.
LINK_WAIT_SECONDS = 60.0


def _connect_error(error: dict) -> str:
    """A socket.io connect refusal carrying ``error`` (``answer``'s shape), encoded."""
    return sio_packet.Packet(
        sio_packet.CONNECT_ERROR, data=refused_connect(error).error_args
    ).encode()


# What the app answers a connect with an invalid session (server.realtime.sockets.on_connect).
REFUSED = _connect_error(answer(Unauthenticated(INVALID_SESSION)))
# What a connect gets when the app did not link up in time (a 503, named but not an incident).
NO_APP = _connect_error(
    body(codes.UNAVAILABLE, codes.UNAVAILABLE.render(what="the server's live results"))
)


class _Counted(direct.Waited):
    """A socket's outgoing queue, counting the result frames in it per output."""

    def __init__(self, queued: Counter[str], writes: stages.Writes) -> None:
        super().__init__()
        self.queued, self.writes = queued, writes

    def _put(self, item: Any) -> None:
        super()._put(item)
        if getattr(item, "output", None) is not None:
            self.queued[item.output] += 1

    def _get(self) -> Any:
        item = super()._get()
        if getattr(item, "output", None) is not None:
            self.queued[item.output] -= 1
            if stages.ON:
                self.writes.wrote(item.output, item.position)
        return item


class _Engine(engineio.AsyncServer):
    def __init__(self, queued: Counter[str], scheme: str, **options: Any) -> None:
        super().__init__(async_mode="aiohttp", **options)
        self.queued, self.scheme = queued, scheme
        self.writes = stages.Writes()
        # python-engineio's aiohttp driver table is shared by every server: this one's own copy
        self._async = {**vars(self)["_async"], "websocket": direct.WebSocket}

    def _cors_allowed_origins(self, environ: dict[str, Any]) -> Any:
        """The same-origin check with this edge's scheme (aiohttp's environ knows no TLS)."""
        environ["wsgi.url_scheme"] = self.scheme
        return super()._cors_allowed_origins(environ)

    def create_queue(self, *args: Any, **kwargs: Any) -> asyncio.Queue:
        return _Counted(self.queued, self.writes)

    def _unauthorized(self, message: Any = None) -> dict[str, Any]:
        """A handshake the edge refused (``Edge._connect`` returns the error): answered with
        its code's status in the API's error shape, not python-engineio's bare 401."""
        if not isinstance(message, SluiceError):
            return super()._unauthorized(message)
        return {
            "status": f"{message.status} {HTTPStatus(message.status).phrase}",
            "headers": [("Content-Type", "application/json")],
            "response": json.dumps(answer(message)).encode(),
        }


class Edge:
    """One edge process: its engine.io server, its channel to the app, the sockets' lag."""

    def __init__(self, settings: Settings, channel: str) -> None:
        self.settings, self.channel = settings, channel
        self.queued: Counter[str] = Counter()
        self.dropped: Counter[str] = Counter()
        self.scheme = "https" if settings.tls_cert else "http"
        self.engine = _Engine(
            self.queued, self.scheme, max_http_buffer_size=settings.max_request_bytes
        )
        self.engine.on("connect", self._connect)
        self.engine.on("message", self._message)
        self.engine.on("disconnect", self._disconnect)
        self.connecting = Connecting(
            settings.max_connecting_per_address, settings.socket_connect_seconds
        )
        self._environ: dict[str, dict[str, Any]] = {}  # until its socket.io connect
        self._joined: set[str] = set()  # sockets the app knows
        self._next: dict[str, dict[str, int]] = {}  # sid: output: the next position it was given
        self._missed: dict[str, dict[str, list[int]]] = {}  # sid: output: [from, to]
        self._writer: asyncio.StreamWriter | None = None
        self._linked = asyncio.Event()  # set while the channel to the app is open
        # the app's frames, read as they come, applied in order by ``apply_frames``
        self._inbox: deque[dict[str, Any]] = deque()
        self._arrived = asyncio.Event()
        self._urgent = asyncio.Event()  # a frame other than a result's waits: no pause
        self.pause_per_writing = PAUSE_PER_WRITING
        self._tasks: set[asyncio.Task] = set()  # work on one socket, held until done

    async def run_channel(self) -> None:
        """Connect to the app (again, until it listens) and read its frames into the inbox,
        never waiting for them to be applied: what arrives while the edge writes a batch to
        its sockets waits there, to be merged (``apply_frames``)."""
        while True:
            try:
                reader, self._writer = await asyncio.open_unix_connection(self.channel)
            except OSError:
                await asyncio.sleep(0.2)  # poll: the app is still starting
                continue
            self._linked.set()
            while (frame := await frames.aread(reader)) is not None:
                if stages.ON and merging.is_result(frame):
                    at = _next_of(frames.unwire(frame["data"]))
                    stages.mark("received", frame["output"], at)
                self._take(frame)
            self._linked.clear()
            self._writer = None
            # a new app knows none of the sockets joined now: they end after its last frames
            self._take({"op": "unlinked", "sids": list(self._joined)})

    def _take(self, frame: dict[str, Any]) -> None:
        self._inbox.append(frame)
        self._arrived.set()
        if not merging.is_result(frame):
            self._urgent.set()

    async def apply_frames(self) -> None:
        """Apply the app's frames in order, taking all that wait at once: result frames among
        them to the same sockets leave as one (``server.edge.merging``), so a backlog costs
        each socket one write, not one a batch. After writing results, pause (see
        ``PAUSE_PER_WRITING``) unless some other frame (an ack, a close) waits."""
        while True:
            await self._arrived.wait()
            self._arrived.clear()
            while self._inbox:
                taken = list(self._inbox)
                self._inbox.clear()
                self._urgent.clear()
                started = time.perf_counter()
                for frame in merging.in_order(taken):
                    await self._received(frame)
                if any(merging.is_result(frame) for frame in taken):
                    await self._pause(time.perf_counter() - started)

    async def _pause(self, writing: float) -> None:
        """Let results gather for ``writing`` times ``pause_per_writing`` seconds (capped), or
        until a frame that is not a result's arrives."""
        pause = min(writing * self.pause_per_writing, MAX_PAUSE_SECONDS)
        if self._urgent.is_set() or pause <= 0:
            return
        try:
            await asyncio.wait_for(self._urgent.wait(), pause)
        except TimeoutError:
            pass

    def _send(self, frame: dict[str, Any]) -> None:
        if self._writer is not None and not self._writer.is_closing():
            self._writer.write(frames.pack(frame))

    async def _connect(self, sid: str, environ: dict[str, Any]) -> SluiceError | None:
        """An engine.io handshake: refused (the error returned) if its client address holds
        too many sockets not yet connected."""
        address = environ["aiohttp.request"].remote or "?"  # the TCP peer, TLS or not
        try:
            self.connecting.open(sid, address)
        except SluiceError as err:
            log.info("refused a socket of %s: %s", address, err.code)
            return err
        kept = {k: v for k, v in environ.items() if isinstance(v, str)}
        kept["REMOTE_ADDR"] = address
        kept["wsgi.url_scheme"] = self.scheme
        self._environ[sid] = kept
        return None

    async def _message(self, sid: str, data: str | bytes) -> None:
        if sid not in self._joined:
            environ = self._environ.pop(sid, None)
            if environ is None:  # refused before: ignore the rest
                return
            self.connecting.arrived(sid)
            if not _may_be_authenticated(data, environ):
                await self._refuse(sid, REFUSED)
                return
            if not await self._app_linked():
                await self._refuse(sid, NO_APP)
                return
            if sid not in self.engine.sockets:  # it left while waiting for the app
                return
            self._joined.add(sid)
            self._send({"op": "connect", "sid": sid, "environ": environ})
        self._send({"op": "message", "sid": sid, "data": frames.wire(data)})

    async def _app_linked(self) -> bool:
        """Whether the channel to the app is open, waiting for it a while: right after the
        server (or a new worker) starts, the REST side may answer before the channel is up,
        and a connect sent then would go nowhere."""
        try:
            await asyncio.wait_for(self._linked.wait(), LINK_WAIT_SECONDS)
        except TimeoutError:
            log.warning(
                "the app did not link up in %.0f s; a connect was refused", LINK_WAIT_SECONDS
            )
            return False
        return True

    async def _refuse(self, sid: str, refusal: str) -> None:
        await self.engine.send(sid, refusal)
        await self._end(sid)  # after the refusal is written

    async def _end(self, sid: str) -> None:
        """End the socket and its connection: engine.io's close packet alone leaves the
        connection to the client to close. python-engineio's close waits until the client has
        read what is queued, which a polling client that stopped polling never does: it is
        waited for ``REFUSAL_SECONDS``, then the socket is dropped."""
        socket = self.engine.sockets.get(sid)
        if socket is None:
            return
        try:
            await asyncio.wait_for(self.engine.disconnect(sid), REFUSAL_SECONDS)
        except TimeoutError:
            self.engine.sockets.pop(sid, None)
        await socket.queue.put(None)  # its writer ends and closes the WebSocket

    def _apart(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` in its own task: the channel's reader waits for no client."""
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _disconnect(self, sid: str, reason: Any = None) -> None:
        socket = self.engine.sockets.get(sid)
        if socket is not None and not socket.upgraded:
            # python-engineio leaves a closed polling socket's pending long poll waiting until
            # the ping's timeout (30 s), and the client's disconnect waits for that poll: it
            # ends now, empty
            socket.queue.put_nowait(None)
        self.connecting.end(sid)
        self._environ.pop(sid, None)
        self._next.pop(sid, None)
        self._missed.pop(sid, None)
        if sid in self._joined:
            self._joined.discard(sid)
            self._send({"op": "disconnect", "sid": sid})

    async def _received(self, frame: dict[str, Any]) -> None:
        op = frame["op"]
        if op == "send" and frame["sid"] in self.connecting:
            await self._answered(frame["sid"], frames.unwire(frame["data"]))
        elif op == "send":
            await self._put(
                frame["sid"],
                engineio.packet.Packet(engineio.packet.MESSAGE, frames.unwire(frame["data"])),
            )
        elif op == "fanout":
            await self._fanout(frame)
        elif op == "close":
            self._joined.discard(frame["sid"])
            self._apart(self._end(frame["sid"]))
        elif op == "unlinked":
            for sid in frame["sids"]:
                await self.engine.disconnect(sid)

    async def _answered(self, sid: str, data: str | bytes) -> None:
        """The app's answer to a socket's connect: accepted, the app counts the socket from
        now on; refused, the socket ends (its client may try again on a new one)."""
        if isinstance(data, str) and data.startswith(str(sio_packet.CONNECT_ERROR)):
            self._apart(self._refuse(sid, data))
            return
        self.connecting.end(sid)
        await self._put(sid, engineio.packet.Packet(engineio.packet.MESSAGE, data))

    async def expire(self) -> None:
        """Every second: close the sockets that sent no socket.io connect in time."""
        late = body(
            codes.CONNECT_TIMEOUT,
            codes.CONNECT_TIMEOUT.render(seconds=f"{self.connecting.seconds:g}"),
        )
        refusal = _connect_error(late)
        while True:
            await asyncio.sleep(REPORT_SECONDS)
            overdue = self.connecting.overdue()
            await asyncio.gather(*(self._refuse(sid, refusal) for sid in overdue))

    async def _fanout(self, frame: dict[str, Any]) -> None:
        """One packet to many sockets: its WebSocket frame built once, written to each
        (``direct``), ``CHUNK`` sockets at a time so that requests and other sockets' work
        take turns with a fan-out to thousands."""
        output = frame["output"]
        pkt = engineio.packet.Packet(engineio.packet.MESSAGE, frames.unwire(frame["data"]))
        built = _built(pkt)
        if output is None:
            for sid in frame["sids"]:
                await self._put(sid, pkt, built)
            return
        pkt.output = output  # counted while queued
        position = pkt.position = _next_of(pkt.data)
        limit, sockets = self.settings.socket_queue_frames, self.engine.sockets
        for done, sid in enumerate(frame["sids"], 1):
            socket = sockets.get(sid)
            if socket is None:
                continue
            if sid in self._missed:
                await self._tell_missed(sid, socket)
            given = self._next.setdefault(sid, {})
            if socket.queue.qsize() >= limit or sid in self._missed:
                self.dropped[output] += 1
                gap = self._missed.setdefault(sid, {}).setdefault(output, [given.get(output, 0), 0])
                gap[1] = position
            elif direct.write(socket, built):
                if stages.ON:
                    self.engine.writes.wrote(output, position)
            else:
                await self._put(sid, pkt, built)
            given[output] = position
            if done % CHUNK == 0:
                await asyncio.sleep(0)  # let the loop's other work in
        if stages.ON:
            stages.mark("queued", output, position)

    async def _tell_missed(self, sid: str, socket: Any) -> None:
        """A socket that fell behind and has room again is told what it lost."""
        gaps = self._missed.get(sid)
        if gaps is None or socket.queue.qsize() >= self.settings.socket_queue_frames:
            return
        del self._missed[sid]
        for output, (start, end) in gaps.items():
            event = sio_packet.Packet(
                sio_packet.EVENT, data=[MISSED, {"output": output, "from": start, "to": end}]
            )
            await self._put(sid, engineio.packet.Packet(engineio.packet.MESSAGE, event.encode()))

    async def _put(self, sid: str, pkt: Any, built: bytes | None = None) -> None:
        """Send ``pkt`` (its frame ``built``, if it was) to a socket: written now if it may
        be (``direct.write``), else queued."""
        socket = self.engine.sockets.get(sid)
        if (
            socket is not None
            and not socket.closed
            and not direct.write(socket, built or _built(pkt))
        ):
            await socket.send(pkt)

    async def report(self) -> None:
        """Every second: the queued and dropped frames per output, to the app; and the
        sockets that caught up told what they missed."""
        while True:
            await asyncio.sleep(REPORT_SECONDS)
            self.engine.writes.flush()
            for sid in list(self._missed):
                socket = self.engine.sockets.get(sid)
                if socket is not None:
                    await self._tell_missed(sid, socket)
            outputs = set(self.queued) | set(self.dropped)
            self._send(
                {
                    "op": "frames",
                    "outputs": {
                        name: {"queued": self.queued[name], "dropped": self.dropped[name]}
                        for name in outputs
                    },
                }
            )


def _may_be_authenticated(data: str | bytes, environ: dict[str, str]) -> bool:
    """Whether a socket.io connect carries a token or the session cookie (the app decides
    if they are valid); anything else is refused at the edge."""
    if not isinstance(data, str) or not data.startswith(str(sio_packet.CONNECT)):
        return False
    if f"{SESSION_COOKIE}=" in environ.get("HTTP_COOKIE", ""):
        return True
    return '"token"' in data


def _built(pkt: Any) -> bytes:
    """An engine.io packet's WebSocket frame."""
    return direct.ws_frame(pkt.encode())


def _next_of(data: str | bytes) -> int:
    """The ``next`` position of an encoded ``tuples`` event."""
    pkt = sio_packet.Packet(encoded_packet=data)
    return int(pkt.data[1].get("next", 0))


def _status_of(status: int, exc: BaseException | None) -> int:
    """aiohttp refuses a request too long or too many headers with 400: the status gunicorn
    gives them (414, 431), so a client sees one server."""
    text = str(exc)
    if isinstance(exc, http_exceptions.LineTooLong):
        return 431 if "header" in text.lower() else 414
    if isinstance(exc, http_exceptions.BadHttpMessage) and "headers" in text.lower():
        return 431
    return status


def _json_error(
    handler: web_protocol.RequestHandler,
    request: Any,
    status: int = 500,
    exc: BaseException | None = None,
    message: str | None = None,
) -> web.StreamResponse:
    """aiohttp's error page, as ``server.http.refusals.refusal``."""
    status = _status_of(status, exc)
    if status not in SERVER_ERRORS:
        return _html_error(handler, request, status, exc, message)
    log.info("refused a request: %s", status)
    return web.Response(
        status=status,
        body=refusal(status, type(exc).__name__),
        content_type="application/json",
        headers={"Connection": "close"},
    )


_html_error = web_protocol.RequestHandler.handle_error


def build(settings: Settings, core: str, channel: str) -> tuple[web.Application, Edge]:
    edge = Edge(settings, channel)
    app = web.Application(client_max_size=settings.max_request_bytes * 2 + (1 << 20))
    edge.engine.attach(app, engineio_path="socket.io")
    Proxy(core, https=bool(settings.tls_cert)).route(app)

    async def background(app: web.Application):
        tasks = [
            asyncio.create_task(task())
            for task in (edge.run_channel, edge.apply_frames, edge.report, edge.expire)
        ]
        yield
        for task in tasks:
            task.cancel()

    app.cleanup_ctx.append(background)
    return app, edge


def run(settings: Settings, core: str, channel: str) -> None:
    """Serve the public address until SIGTERM. A terminal's Ctrl-C is for the server: its
    master stops, then terminates the edge; an edge that left first would look like one that
    died, and be replaced."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    web_protocol.RequestHandler.handle_error = _json_error  # type: ignore[method-assign,assignment]
    app, _ = build(settings, core, channel)
    app.cleanup_ctx.append(collecting.on_a_clock)
    context = None
    if settings.tls_cert:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(settings.tls_cert, settings.tls_key)
    web.run_app(
        app,
        host=settings.host,
        port=settings.port,
        ssl_context=context,
        reuse_port=True,
        print=None,
        access_log=None,
        shutdown_timeout=2,
        handle_signals=False,
    )
