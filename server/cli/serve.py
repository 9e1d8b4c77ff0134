"""``sluice serve``: the app on gunicorn, one worker process with a thread per connection.

Threads, not eventlet or gevent: PySpark's py4j callback threads (``foreachBatch``, where
results are delivered) do not survive their monkey-patching, so Flask-SocketIO runs in its
``threading`` mode, whose production server (its documentation's choice) is gunicorn's
``gthread`` worker, WebSocket coming from simple-websocket. One worker, because socket.io
sessions must stay in the process that holds them and the data directory is one process's
alone. The worker builds the app after gunicorn forks it (Spark's JVM must not be forked), and
gunicorn starts a new worker if that one dies; SIGTERM or Ctrl-C stops the queries cleanly
(checkpoints stay) before the worker exits. The data directory is claimed in the first
process, so a second server on it exits at once; the worker inherits the claim.
"""

from __future__ import annotations

import json
import logging
from typing import IO, Any

from flask import Flask
from gunicorn import util
from gunicorn.app.base import BaseApplication
from gunicorn.glogging import Logger

from boxes import codes
from server.app import close_app, create_app
from server.control.datadir import DataDir, claim
from server.http.errors import body, incident
from server.settings import logs
from server.settings.config import Settings, load_settings

log = logging.getLogger(__name__)
# Spark's session can take minutes to start on a loaded machine; a worker is only declared hung
# when it stops answering gunicorn's heartbeat for this long after that.
WORKER_TIMEOUT = 600
# How long open requests (each websocket is one) may take to finish at shutdown.
GRACEFUL_SECONDS = 10
LIMIT_REQUEST_LINE = 8190
# gunicorn answers a request it cannot parse before Flask sees it; these statuses answer in
# the API's error shape instead of gunicorn's HTML page (the rare others, a refused proxy
# line, 417 or 501, keep gunicorn's page).
GUNICORN_ERRORS: dict[int, tuple[codes.Code, dict[str, Any]]] = {
    400: (codes.MALFORMED_REQUEST, {}),
    414: (codes.URI_TOO_LONG, {"limit": LIMIT_REQUEST_LINE}),
    431: (codes.HEADERS_TOO_LARGE, {}),
    500: (codes.INTERNAL_ERROR, {}),
}
_html_error = util.write_error


def _json_error(sock: Any, status: int, reason: str, message: str) -> None:
    """gunicorn's error page, as ``{"error": ...}``; its message (which may quote the
    request) is not echoed."""
    if status not in GUNICORN_ERRORS:
        return _html_error(sock, status, reason, message)
    code, params = GUNICORN_ERRORS[status]
    details: dict[str, Any] = {}
    if status >= 500:  # gunicorn has just logged the failure; name it for the client
        details = params = {"incident": incident()}
        log.error("incident %s: gunicorn answered %s %s", params["incident"], status, reason)
    payload = json.dumps(body(code, code.render(**params), details)).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin1") + payload)


def _answer_errors_in_json(worker: Any) -> None:
    """In the worker: gunicorn writes every error page through ``util.write_error``."""
    util.write_error = _json_error


class _ThroughOurLogging(Logger):
    """gunicorn's own lines (start, worker births and deaths) go to the root logger, so they
    take ``log_format`` like ours instead of gunicorn's private stderr format."""

    def setup(self, cfg: Any) -> None:
        self.error_log.setLevel(self.LOG_LEVELS.get(cfg.loglevel.lower(), logging.INFO))
        self.error_log.propagate = True
        self.access_log.propagate = True


class _Gunicorn(BaseApplication):
    def __init__(self, settings: Settings, claimed: DataDir, out: IO[str]) -> None:
        self.settings = settings
        self.claimed = claimed
        self.out = out
        self.app: Flask | None = None
        super().__init__()

    def load_config(self) -> None:
        settings = self.settings
        options: dict[str, Any] = {
            "bind": f"{settings.host}:{settings.port}",
            "workers": 1,
            "worker_class": "gthread",
            "threads": settings.server_threads,
            "timeout": WORKER_TIMEOUT,
            "graceful_timeout": GRACEFUL_SECONDS,
            "keepalive": 5,
            "accesslog": None,
            "logger_class": _ThroughOurLogging,
            "loglevel": settings.log_level.lower(),
            "proc_name": "sluice",
            "control_socket_disable": True,
            "limit_request_line": LIMIT_REQUEST_LINE,
            "post_worker_init": _answer_errors_in_json,
            "worker_exit": self._worker_exit,
        }
        if settings.tls_cert:
            options.update(certfile=str(settings.tls_cert), keyfile=str(settings.tls_key))
        for name, value in options.items():
            self.cfg.set(name, value)

    def load(self) -> Flask:
        """In the worker: build the app (and start Spark), then announce it."""
        settings = self.settings
        self.app = create_app(settings, self.claimed)
        if settings.demo:
            from server.cli.demo import start_demo

            logins = start_demo(self.app.extensions["sluice"])
            print("Demo logins (the paper's users):", file=self.out)
            for user, password in logins.items():
                print(f"  {user:4} {password}", file=self.out)
        scheme = "https" if settings.tls_cert else "http"
        print(f"Sluice on {scheme}://{settings.host}:{settings.port}/", file=self.out, flush=True)
        log.info(
            "serving on %s://%s:%s/ (Spark runtime %s)",
            scheme,
            settings.host,
            settings.port,
            "on" if settings.runtime else "off",
        )
        return self.app

    def _worker_exit(self, server: Any, worker: Any) -> None:
        if self.app is not None:
            close_app(self.app)


def serve(config_file: str | None, overrides: dict[str, Any], out: IO[str]) -> int:
    """Run until SIGTERM or Ctrl-C."""
    settings = load_settings(config_file, overrides)
    logs.configure(settings.log_level, settings.log_format)
    claimed = claim(settings.data_dir)  # a second server on it stops here, before any work
    _Gunicorn(settings, claimed, out).run()
    return 0
