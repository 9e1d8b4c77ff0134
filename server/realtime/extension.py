"""The process's one Flask-SocketIO object; ``server.app`` binds it to the app.

Async mode is ``threading`` on purpose: PySpark calls back into Python (``foreachBatch``) on
py4j's own OS threads, and delivery emits from those threads. eventlet and gevent monkey-patch
``threading`` and ``socket``, which py4j's callback server does not survive, so the server
runs on real threads (gunicorn's ``gthread`` worker with simple-websocket for WebSocket
transport; see ``server/cli/serve.py``).
"""

from flask_socketio import SocketIO

ASYNC_MODE = "threading"

socketio = SocketIO()
