"""Each app's own Flask-SocketIO object: ``server.app`` makes one per app and binds it there.

One per app, not one per process: two apps in one process (a test's servers, a standby beside
its holder) would otherwise share a socket server, and the first app's results would be sent
to the second app's sockets.

Async mode is ``threading`` on purpose: PySpark calls back into Python (``foreachBatch``) on
py4j's own OS threads, and delivery emits from those threads. eventlet and gevent monkey-patch
``threading`` and ``socket``, which py4j's callback server does not survive, so the server
runs on real threads (gunicorn's ``gthread`` worker with simple-websocket for WebSocket
transport; see ``server/cli/serve.py``).
"""

from flask import Flask, current_app
from flask_socketio import SocketIO

ASYNC_MODE = "threading"


def socketio_of(app: Flask | None = None) -> SocketIO:
    """The socket server bound to ``app`` (the current app by default)."""
    return (app or current_app).extensions["socketio"]
