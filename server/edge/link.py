"""The app's side of the edge: the python-socketio server's engine.io layer, with the sockets
held by edge processes instead of gunicorn's threads.

``EdgeEngine`` stands where python-engineio's threading server stood: the edge reports each
socket's connect (with its request's environ), packets and disconnect, and the socket.io layer
above (Flask-SocketIO's handlers, rooms, acks, ``request.sid``) runs unchanged, its events on a
bounded pool of threads. What it sends goes back as a frame. ``FanOut`` sends an emit to a
room as one frame with the room's sockets (the packet encoded once); the edge writes it to each
socket's bounded queue, the result frames (``tuples``) marked as ones a socket that fell behind
may lose (it is told ``missed``). The edge reports its queued and dropped frames per output each
second (``frames``).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import engineio
import socketio
from socketio import packet

from server.edge import frames, stages

log = logging.getLogger(__name__)
DROPPABLE = "tuples"  # the result event: a socket that fell behind loses these, told `missed`


class _EdgeSocket:
    """The app's handle on a socket an edge holds (what engine.io's server asks of one)."""

    upgraded = True

    def __init__(self, engine: EdgeEngine, edge: _Edge, sid: str) -> None:
        self.engine, self.edge, self.sid = engine, edge, sid
        self.session: dict[str, Any] = {}
        self.closed = False

    def send(self, pkt: Any) -> None:
        self.edge.send({"op": "send", "sid": self.sid, "data": frames.wire(pkt.data)})

    def close(self, wait: bool = True, abort: bool = False, reason: Any = None) -> None:
        """The app ends the socket (a session that ended, a refused connect)."""
        if self.engine.gone(self.sid):
            self.engine.ended(self.sid, reason or self.engine.reason.SERVER_DISCONNECT)
        self.edge.send({"op": "close", "sid": self.sid})


class _Edge:
    """One edge process's connection: frames out under a lock, frames in on a thread."""

    def __init__(self, engine: EdgeEngine, conn: socket.socket) -> None:
        self.engine, self.conn = engine, conn
        self.frames_by_output: dict[str, dict[str, int]] = {}
        self._lock = threading.Lock()
        self._sids: set[str] = set()

    def send(self, frame: dict[str, Any]) -> None:
        data = frames.pack(frame)
        try:
            with self._lock:
                self.conn.sendall(data)
        except OSError:
            log.warning("an edge process is gone; a frame for it was not sent")

    def serve(self) -> None:
        try:
            while (frame := frames.read(self.conn)) is not None:
                self._received(frame)
        except (OSError, ValueError):
            log.exception("the channel to an edge process failed")
        finally:
            self.conn.close()
            for sid in list(self._sids):  # its sockets are gone with it
                self.engine.ended(sid, self.engine.reason.TRANSPORT_CLOSE)
            self.engine.edges.discard(self)

    def _received(self, frame: dict[str, Any]) -> None:
        op, engine = frame["op"], self.engine
        if op == "connect":
            self._sids.add(frame["sid"])
            engine.connected(self, frame["sid"], frame["environ"])
        elif op == "message":
            engine.message(frame["sid"], frames.unwire(frame["data"]))
        elif op == "disconnect":
            self._sids.discard(frame["sid"])
            if engine.gone(frame["sid"]):
                engine.ended(frame["sid"], engine.reason.CLIENT_DISCONNECT)
        elif op == "frames":
            self.frames_by_output = frame["outputs"]


class EdgeEngine(engineio.Server):
    """python-engineio's server, its sockets held by edge processes over ``channel``."""

    def __init__(self, channel: str, app: Any, threads: int, **options: Any) -> None:
        super().__init__(async_mode="threading", **options)
        self.app = app
        # events run on at most ``threads`` threads, not one each: a storm of 10,000
        # subscribes waits its turn instead of starting 10,000 threads
        self._handlers = ThreadPoolExecutor(threads, thread_name_prefix="socket-event")
        # socket.io connects one at a time: python-socketio's room manager does not guard its
        # pending connects against two at once (a KeyError lost a connect in a storm)
        self._connects = ThreadPoolExecutor(1, thread_name_prefix="socket-connect")
        # each socket's connect in progress: python-socketio answers a connect before it
        # counts the socket as connected, so an event its client sends on that answer (a
        # subscribe) would find it not yet connected and be dropped, unanswered
        self._connecting: dict[str, Future] = {}
        self.edges: set[_Edge] = set()
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if os.path.exists(channel):  # left by a worker gunicorn replaced
            os.unlink(channel)
        self._listener.bind(channel)
        self._listener.listen()
        threading.Thread(target=self._accept, name="edge-channel", daemon=True).start()

    def _accept(self) -> None:
        while True:
            conn, _ = self._listener.accept()
            edge = _Edge(self, conn)
            self.edges.add(edge)
            threading.Thread(target=edge.serve, name="edge-link", daemon=True).start()

    def connected(self, edge: _Edge, sid: str, environ: dict[str, Any]) -> None:
        self.sockets[sid] = _EdgeSocket(self, edge, sid)
        environ["flask.app"] = self.app  # as Flask-SocketIO's middleware gives it
        if self._trigger_event("connect", sid, environ, run_async=False) is False:
            self.sockets[sid].close()

    def message(self, sid: str, data: str | bytes) -> None:
        """Handle a socket's packet: a connect one at a time, an event once its socket's
        connect is done (the packets of one socket arrive on one edge's thread)."""
        if sid not in self.sockets:
            return
        if isinstance(data, str) and data.startswith(str(packet.CONNECT)):
            self._connecting[sid] = self._connects.submit(self._trigger_event, "message", sid, data)
            return
        connect = self._connecting.get(sid)
        if connect is None:
            self._handle(sid, data)
        else:
            connect.add_done_callback(lambda _: self._handle(sid, data))

    def _handle(self, sid: str, data: str | bytes) -> None:
        self._handlers.submit(self._trigger_event, "message", sid, data)

    def gone(self, sid: str) -> bool:
        """Forget the socket; whether it was still known (its disconnect is then due)."""
        held = self.sockets.pop(sid, None)
        self._connecting.pop(sid, None)
        if held is not None:
            held.closed = True
        return held is not None

    def ended(self, sid: str, reason: Any) -> None:
        self._trigger_event("disconnect", sid, reason, run_async=False)

    def fanout(self, sids: list[str], data: str | bytes, output: str | None) -> None:
        """One packet to many sockets, one frame per edge; ``output``: a result frame's."""
        by_edge: dict[_Edge, list[str]] = {}
        for sid in sids:
            held = self.sockets.get(sid)
            if held is not None:
                by_edge.setdefault(held.edge, []).append(sid)
        for edge, held_sids in by_edge.items():
            edge.send(
                {"op": "fanout", "sids": held_sids, "data": frames.wire(data), "output": output}
            )

    def frames(self) -> dict[str, dict[str, int]]:
        """Per output, its result frames waiting in sockets' queues and those lost by sockets
        that fell behind, summed over this server's edges."""
        total: dict[str, dict[str, int]] = {}
        for edge in list(self.edges):
            for output, counts in edge.frames_by_output.items():
                summed = total.setdefault(output, {"queued": 0, "dropped": 0})
                for key in summed:
                    summed[key] += counts.get(key, 0)
        return total


class FanOut(socketio.Manager):
    """python-socketio's room manager, sending an emit to a room as one frame per edge."""

    def emit(self, event, data, namespace, room=None, skip_sid=None, callback=None, to=None, **kw):
        engine = self.server.eio
        if callback is not None or not isinstance(engine, EdgeEngine):
            return super().emit(event, data, namespace, room, skip_sid, callback, to, **kw)
        if namespace not in self.rooms:
            return None
        args = list(data) if isinstance(data, tuple) else [] if data is None else [data]
        skip = skip_sid if isinstance(skip_sid, list) else [skip_sid]
        encoded = self.server.packet_class(
            packet.EVENT, namespace=namespace, data=[event, *args]
        ).encode()
        if isinstance(encoded, list):  # binary attachments: packet by packet, socket by socket
            return super().emit(event, data, namespace, room, skip_sid, callback, to, **kw)
        sids = [eio for sid, eio in self.get_participants(namespace, to or room) if sid not in skip]
        output = data.get("output") if event == DROPPABLE and isinstance(data, dict) else None
        engine.fanout(sids, encoded, output)
        if stages.ON and output is not None and "next" in data:
            stages.mark("sent", output, data["next"])
        return None


def edge_frames(server: socketio.Server) -> dict | None:
    """``server``'s result frames per output (``EdgeEngine.frames``); None when its sockets are
    not on an edge."""
    engine = server.eio
    return {"outputs": engine.frames()} if isinstance(engine, EdgeEngine) else None


def attach(server: socketio.Server, channel: str, app: Any, threads: int) -> EdgeEngine:
    """Put ``server``'s (``app``'s) sockets on the edge processes that connect to ``channel``;
    their events run on at most ``threads`` threads."""
    engine = EdgeEngine(channel, app, threads, max_http_buffer_size=server.eio.max_http_buffer_size)
    for event, handler in server.eio.handlers.items():
        engine.on(event, handler)
    server.eio = engine
    server.manager = FanOut()
    server.manager.set_server(server)
    server.manager_initialized = False
    return engine
