"""The channel between the app and its edge: frames of one JSON object, length first.

A frame's binary socket.io payload (an attachment) travels as ``{"b64": ...}``. Both ends are
processes of one ``sluice serve`` on a Unix socket in a directory only its user can enter.
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
from typing import Any

HEADER = 4
MAX_FRAME = 1 << 30


def pack(frame: dict[str, Any]) -> bytes:
    payload = json.dumps(frame, separators=(",", ":")).encode()
    return len(payload).to_bytes(HEADER, "big") + payload


def wire(data: str | bytes) -> str | dict[str, str]:
    """A socket.io payload as a frame carries it."""
    return {"b64": base64.b64encode(data).decode()} if isinstance(data, bytes) else data


def unwire(data: str | dict[str, str]) -> str | bytes:
    return base64.b64decode(data["b64"]) if isinstance(data, dict) else data


def _size(head: bytes) -> int:
    size = int.from_bytes(head, "big")
    if size > MAX_FRAME:
        raise ValueError(f"a frame of {size} bytes")
    return size


def read(conn: socket.socket) -> dict[str, Any] | None:
    """The next frame, or None once the other end closed."""
    head = _exactly(conn, HEADER)
    if head is None:
        return None
    body = _exactly(conn, _size(head))
    return None if body is None else json.loads(body)


def _exactly(conn: socket.socket, count: int) -> bytes | None:
    chunks, left = [], count
    while left:
        chunk = conn.recv(min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


async def aread(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    try:
        head = await reader.readexactly(HEADER)
        return json.loads(await reader.readexactly(_size(head)))
    except asyncio.IncompleteReadError:
        return None
