"""What delivery needs of the socket transport: send an event to one socket or to a room, and
put a socket in a room or take it out (``server.realtime.audiences``). Rooms are the contract
between delivery and whatever holds the sockets: delivery decides who is in which room, the
transport sends one encoded frame per room to every socket in it."""

from __future__ import annotations

import logging
from typing import Any, Protocol

log = logging.getLogger(__name__)


class Transport(Protocol):
    def emit(self, event: str, data: dict, to: str) -> None:
        """Send ``event`` to the socket or room ``to``."""

    def enter_room(self, sid: str, room: str) -> None: ...

    def leave_room(self, sid: str, room: str) -> None: ...


class SocketRooms:
    """The transport over a Flask-SocketIO object, in one namespace (its server is looked up
    at each call: it exists once the app is bound)."""

    def __init__(self, socketio: Any, namespace: str) -> None:
        self.socketio, self.namespace = socketio, namespace

    def emit(self, event: str, data: dict, to: str) -> None:
        self.socketio.emit(event, data, to=to, namespace=self.namespace)

    def enter_room(self, sid: str, room: str) -> None:
        """Put a socket in a room; one that went away meanwhile is not there to put (its
        disconnect ends its subscriptions, and delivery then forgets it)."""
        try:
            self.socketio.server.enter_room(sid, room, namespace=self.namespace)
        except (KeyError, ValueError):
            log.info("socket %s left before it could enter its audience's room", sid)

    def leave_room(self, sid: str, room: str) -> None:
        self.socketio.server.leave_room(sid, room, namespace=self.namespace)
