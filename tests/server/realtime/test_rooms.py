"""Delivery's transport over Flask-SocketIO (``server.realtime.rooms.SocketRooms``)."""

from __future__ import annotations

import shutil

import socketio
from serverkit import LiveServer, overrides

from server.app import close_app, create_app
from server.realtime.extension import socketio_of
from server.realtime.rooms import SocketRooms
from server.realtime.sockets import NAMESPACE


def test_a_room_reaches_its_sockets_and_a_socket_gone_meanwhile_is_no_error(app, template):
    """An event to a room reaches the sockets in it, once each; putting a socket that has
    gone away in a room (a disconnect racing a batch's audiences) is no error for the batch."""
    live = LiveServer(app)
    rooms = SocketRooms(socketio_of(app), NAMESPACE)
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


def test_a_second_app_in_the_process_does_not_take_the_first_apps_sockets(app, template, tmp_path):
    """Each app has its own socket server: a room emit of the first app still reaches its own
    sockets after a second app (a test's second server, a standby beside its holder) is made
    and closed in the same process."""
    live = LiveServer(app)
    client = socketio.SimpleClient()
    shutil.copytree(template[0], tmp_path / "other")
    other = create_app(overrides(tmp_path / "other"))
    try:
        assert socketio_of(other) is not socketio_of(app)
        client.connect(live.url, auth={"token": template[2]["al"]}, transports=["websocket"])
        close_app(other)
        rooms = SocketRooms(socketio_of(app), NAMESPACE)
        rooms.enter_room(client.sid, "audience:test:1")
        rooms.emit("tuples", {"output": "out1", "tuples": [1]}, to="audience:test:1")
        assert client.receive(timeout=10) == ["tuples", {"output": "out1", "tuples": [1]}]
    finally:
        client.disconnect()
        live.stop()
