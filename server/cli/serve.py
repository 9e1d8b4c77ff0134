"""``sluice serve``: the app on gunicorn, one worker process with a thread per request, and the
sockets on an edge process in front of it.

Threads, not eventlet or gevent: PySpark's py4j callback threads (``foreachBatch``, where
results are delivered) do not survive their monkey-patching, so Flask-SocketIO runs in its
``threading`` mode, whose production server (its documentation's choice) is gunicorn's
``gthread`` worker, WebSocket coming from simple-websocket. One worker, because socket.io
sessions must stay in the process that holds them and the data directory is one process's
alone. The worker builds the app after gunicorn forks it (Spark's JVM must not be forked), and
gunicorn starts a new worker if that one dies; SIGTERM or Ctrl-C stops the queries cleanly
(checkpoints stay) before the worker exits. The data directory is claimed in the first
process, so a second server on it exits at once; the worker inherits the claim.

With ``edge`` (the default) gunicorn listens on a Unix socket in a directory only this user can
enter, and an edge process (``server.edge``, asyncio) takes the public address: it holds the
sockets, thousands of them without a thread each, and passes every other request on to gunicorn
(TLS ends there). The app trusts ``X-Forwarded-For`` and ``-Proto`` from that socket alone,
since only the edge can reach it. Without ``edge``, gunicorn takes the public address and each
websocket holds one of its threads.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from typing import IO, Any

from flask import Flask
from gunicorn import util
from gunicorn.app.base import BaseApplication
from gunicorn.glogging import Logger
from werkzeug.middleware.proxy_fix import ProxyFix

from server.app import close_app, create_app
from server.control.datadir import DataDir, claim
from server.edge.link import attach
from server.http.refusals import LIMIT_REQUEST_LINE, SERVER_ERRORS, refusal
from server.realtime.extension import socketio_of
from server.settings import logs
from server.settings.config import Settings, load_settings

log = logging.getLogger(__name__)
# Spark's session can take minutes to start on a loaded machine; a worker is only declared hung
# when it stops answering gunicorn's heartbeat for this long after that.
WORKER_TIMEOUT = 600
# How long open requests (each websocket is one) may take to finish at shutdown.
GRACEFUL_SECONDS = 10
_html_error = util.write_error


def _json_error(sock: Any, status: int, reason: str, message: str) -> None:
    """gunicorn's error page, as ``refusal``."""
    if status not in SERVER_ERRORS:
        return _html_error(sock, status, reason, message)
    payload = refusal(status, reason)
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


class _Edge:
    """The edge process and the private directory of the sockets it reaches the app by."""

    def __init__(self, config_file: str | None, overrides: dict[str, Any], threads: int) -> None:
        self.threads = threads  # the app's socket events run on at most as many
        self.private = tempfile.mkdtemp(prefix="sluice-")  # 0700: this user's alone
        self.core = os.path.join(self.private, "app.sock")
        self.channel = os.path.join(self.private, "edge.sock")
        self.given = json.dumps({"config_file": config_file, "overrides": overrides})
        self.process: subprocess.Popen | None = None
        self._stopping = False
        self._lock = threading.Lock()  # a replacement is never started once stopping began

    def start(self, server: Any) -> None:
        """In gunicorn's master, once it listens: the edge, and a watcher that starts another
        if it dies before the server stops (the edge ignores Ctrl-C: the master stops it)."""
        self._spawn()
        threading.Thread(target=self._watch, name="edge-watch", daemon=True).start()

    def _spawn(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "server.edge", self.core, self.channel],
            stdin=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdin is not None
        with self.process.stdin as given:  # not in its arguments or environment: secrets
            given.write(self.given)

    def _watch(self) -> None:
        """Any exit but the server's own stop gets a new edge. Not judged by the exit status:
        gunicorn's master reaps every child that exits (its SIGCHLD handler waits for any
        pid), and when it wins the race ``wait`` here sees no status and says 0."""
        while True:
            assert self.process is not None
            self.process.wait()
            with self._lock:
                if self._stopping:
                    return
                log.error("the edge process exited (%s); starting another", self.process.returncode)
                self._spawn()

    def stop(self, server: Any) -> None:
        with self._lock:
            self._stopping = True
        if self.process is not None:
            self.process.terminate()
            self.process.wait()
        shutil.rmtree(self.private, ignore_errors=True)

    def attach(self, app: Flask) -> None:
        """In the worker: the sockets come from the edge, the requests through it."""
        attach(socketio_of(app).server, self.channel, app, self.threads)
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=1, x_proto=1)  # type: ignore[method-assign]


class _Gunicorn(BaseApplication):
    def __init__(
        self, settings: Settings, claimed: DataDir, out: IO[str], edge: _Edge | None
    ) -> None:
        self.settings = settings
        self.claimed = claimed
        self.out = out
        self.edge = edge
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
        if self.edge is not None:
            options.update(
                bind=f"unix:{self.edge.core}", when_ready=self.edge.start, on_exit=self.edge.stop
            )
        elif settings.tls_cert:
            options.update(certfile=str(settings.tls_cert), keyfile=str(settings.tls_key))
        for name, value in options.items():
            self.cfg.set(name, value)

    def load(self) -> Flask:
        """In the worker: build the app (and start Spark), then announce it."""
        settings = self.settings
        self.app = create_app(settings, self.claimed)
        if self.edge is not None:
            self.edge.attach(self.app)
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
    edge = _Edge(config_file, overrides, settings.server_threads) if settings.edge else None
    _Gunicorn(settings, claimed, out, edge).run()
    return 0
