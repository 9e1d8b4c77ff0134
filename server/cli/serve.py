"""``sluice serve``: the app on Werkzeug's threaded server, with WebSocket and optional TLS.

Threads, not eventlet or gevent: PySpark's py4j callback threads (``foreachBatch``, where
results are delivered) do not survive their monkey-patching, so Flask-SocketIO runs in its
``threading`` async mode; WebSocket transport comes from simple-websocket. Werkzeug is
therefore the server, which Flask-SocketIO would refuse as "unsafe" for production unless told:
it is fine for this single-process design, and TLS is offered by ``tls_cert``/``tls_key``.
"""
from __future__ import annotations

import logging
import signal
import sys
from typing import Any

from server.app import close_app, create_app
from server.realtime.extension import socketio
from server.settings import logs
from server.settings.config import load_settings

log = logging.getLogger(__name__)


def serve(config_file: str | None, overrides: dict[str, Any], out) -> int:
    """Run until interrupted; SIGTERM, like Ctrl-C, stops queries cleanly (checkpoints stay)."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    settings = load_settings(config_file, overrides)
    logs.configure(settings.log_level, settings.log_format)
    app = create_app(settings)
    svc = app.extensions["sluice"]
    try:
        if settings.demo:
            from server.cli.demo import start_demo

            logins = start_demo(svc)
            print("Demo logins (the paper's users):", file=out)
            for user, password in logins.items():
                print(f"  {user:4} {password}", file=out)
        tls = (str(settings.tls_cert), str(settings.tls_key)) if settings.tls_cert else None
        scheme = "https" if tls else "http"
        print(f"Sluice on {scheme}://{settings.host}:{settings.port}/", file=out, flush=True)
        log.info("serving on %s://%s:%s/ (Spark runtime %s)", scheme, settings.host,
                 settings.port, "on" if settings.runtime else "off")
        socketio.run(app, host=settings.host, port=settings.port, ssl_context=tls,
                     allow_unsafe_werkzeug=True, use_reloader=False, log_output=False)
    finally:
        close_app(app)
    return 0
