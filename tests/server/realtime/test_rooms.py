"""Delivery's transport over Flask-SocketIO (``server.realtime.rooms.SocketRooms``)."""

from __future__ import annotations

import socketio
from serverkit import LiveServer

from server.realtime.extension import socketio as flask_socketio
from server.realtime.rooms import SocketRooms
from server.realtime.sockets import NAMESPACE


def test_a_room_reaches_its_sockets_and_a_socket_gone_meanwhile_is_no_error(app, template):
    """An event to a room reaches the sockets in it, once each; putting a socket that has
    gone away in a room (a disconnect racing a batch's audiences) is no error for the batch."""
    live = LiveServer(app)
    rooms = SocketRooms(flask_socketio, NAMESPACE)
    client = socketio.SimpleClient()
    try:
        client.connect(live.url, auth={"token": template[2]["al"]}, transports=["websocket"])
        rooms.enter_room(client.sid, "audience:test:0")
        rooms.enter_room("a-socket-gone", "audience:test:0")
        rooms.emit("tuples", {"output": "out1", "tuples": []}, to="audience:test:0")
        assert client.receive(timeout=10) == ["tuples", {"output": "out1", "tuples": []}]
        rooms.leave_room(client.sid, "audience:test:0")
        rooms.leave_room("a-socket-gone", "audience:test:0")
    finally:
        client.disconnect()
        live.stop()
