"""A frame built once, written straight to each socket's connection.

python-engineio sends a packet by putting it in the socket's queue, where the socket's writer
task takes it, encodes it and writes it: for one result batch to 10,000 sockets that is 10,000
queue hand-offs, task wake-ups and encodings (and, with permessage-deflate, 10,000
compressions of the same bytes); measured, a batch reached its last client 0.3 s (p50) to 2 s
(p99) after the edge had queued it for 1,000 sockets (docs/benchmarks.md, "The live edge").
Here the edge builds the WebSocket frame once and writes it to each socket's transport, which
never waits. ``write`` does so when the socket's writer task waits on its empty queue (all it
was sent before is written: order kept) and its connection is not behind (``BEHIND_BYTES``
not yet taken by the kernel); otherwise the caller queues the packet as python-engineio
would, and the socket's bounded queue decides (``server.edge.process``).

The edge's WebSockets do not negotiate compression: a frame compressed per connection cannot
be shared, and the edge's cost per socket is what bounds its sockets (docs/architecture.md).
"""

from __future__ import annotations

import asyncio
import struct
from typing import Any

from aiohttp.web import WebSocketResponse
from engineio.async_drivers import aiohttp as engineio_aiohttp

# A connection with this much written but not yet taken by the kernel is behind: its frames
# go to its queue, where its writer waits for it (and the queue's bound applies).
BEHIND_BYTES = 64 * 1024
TEXT, BINARY = 0x81, 0x82  # FIN and the opcode (RFC 6455, 5.2)


def ws_frame(packet: str | bytes) -> bytes:
    """An encoded engine.io packet as one unmasked, uncompressed WebSocket frame: text, or
    binary for a binary payload (as python-engineio's writer sends them)."""
    first, payload = (TEXT, packet.encode()) if isinstance(packet, str) else (BINARY, packet)
    size = len(payload)
    if size < 126:
        head = struct.pack("!BB", first, size)
    elif size < 1 << 16:
        head = struct.pack("!BBH", first, 126, size)
    else:
        head = struct.pack("!BBQ", first, 127, size)
    return head + payload


class Waited(asyncio.Queue):
    """A socket's queue that knows when its writer task waits on it: then every packet it
    took before is written (it takes the next only once those are)."""

    def __init__(self) -> None:
        super().__init__()
        self.waited = False

    async def get(self) -> Any:
        self.waited = True
        try:
            return await super().get()
        finally:
            self.waited = False


class WebSocket(engineio_aiohttp.WebSocket):
    """python-engineio's aiohttp WebSocket, uncompressed, its transport kept on its socket
    (``socket.transport``) for ``write``."""

    async def __call__(self, environ: dict[str, Any]) -> WebSocketResponse:
        request = environ["aiohttp.request"]
        self._sock = WebSocketResponse(
            max_msg_size=self.server.max_http_buffer_size, compress=False
        )
        await self._sock.prepare(request)
        self.environ = environ
        socket = self.handler.__self__  # the engine.io socket this connection is for
        socket.transport = request.transport
        try:
            await self.handler(self)
        finally:
            socket.transport = None
        return self._sock


def write(socket: Any, frame: bytes) -> bool:
    """Write ``frame`` to ``socket``'s connection if it may go there now (see the module's
    doc); whether it did."""
    transport = getattr(socket, "transport", None)
    if (
        transport is None
        or socket.closed
        or not socket.upgraded
        or socket.upgrading  # a polling request may still be reading its queue
        or not (socket.queue.waited and socket.queue.empty())
        or transport.is_closing()
        or transport.get_write_buffer_size() >= BEHIND_BYTES
    ):
        return False
    transport.write(frame)
    return True
