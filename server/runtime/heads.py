"""A loopback service that tells Spark sources where each stream's durable log ends.

Spark runs the Python source's ``read`` (``source.LogReader``, a
``SimpleDataSourceStreamReader``) in a driver-side Python process of its own, so the source
cannot share memory with the ingestion log. It asks here instead, over one kept-open
connection, and the answer is a long poll: it comes back as soon as a stream grows, or after
the wait expires. That gives low latency without spinning when a query is idle.

Protocol, one JSON line each way: ``{"known": {stream: seq}, "wait": seconds}`` ->
``{"heads": {stream: [seq, seg, pos]}}`` or ``{"error": message}``.
"""

from __future__ import annotations

import json
import socket
import socketserver
import threading

from server.ingest.log import IngestLog

MAX_WAIT = 5.0


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        log: IngestLog = self.server.log  # type: ignore[attr-defined]
        first = True
        for line in self.rfile:
            try:
                request = json.loads(line)
                if first:
                    self.server.arrived(request.get("client", ""))  # type: ignore[attr-defined]
                    first = False
                wait = min(float(request.get("wait", 0)), MAX_WAIT)
                heads = log.wait_for_change({k: int(v) for k, v in request["known"].items()}, wait)
                reply = {"heads": {name: pos.to_list() for name, pos in heads.items()}}
            except Exception as exc:  # the reply carries the reason to the Spark source
                reply = {"error": str(exc)}
            self.wfile.write(json.dumps(reply).encode() + b"\n")
            self.wfile.flush()


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class HeadServer:
    """Serves ``log``'s heads on 127.0.0.1 at an ephemeral port (``address``).

    It also counts the sources that have connected per client name: a source's first request
    proves Spark has started its Python process, which the runner waits for (see
    ``wait_for_clients``).
    """

    def __init__(self, log: IngestLog) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.log = log  # type: ignore[attr-defined]
        self._server.arrived = self._arrived  # type: ignore[attr-defined]
        self._clients: dict[str, int] = {}
        self._connected = threading.Condition()
        host, port = self._server.server_address[:2]
        self.address = f"{host}:{port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="head-server", daemon=True
        )
        self._thread.start()

    def _arrived(self, client: str) -> None:
        with self._connected:
            self._clients[client] = self._clients.get(client, 0) + 1
            self._connected.notify_all()

    def wait_for_clients(self, client: str, count: int, ready, timeout: float) -> bool:
        """Wait until ``count`` sources named ``client`` have connected or ``ready()`` is false."""
        with self._connected:
            return self._connected.wait_for(
                lambda: self._clients.get(client, 0) >= count or not ready(), timeout
            )

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class HeadClient:
    """The source's side: one connection, reopened if it breaks."""

    def __init__(self, address: str, client: str = "") -> None:
        host, port = address.rsplit(":", 1)
        self._client = client
        self._address = (host, int(port))
        self._sock: socket.socket | None = None
        self._file = None

    def wait(self, known: dict[str, int], wait: float) -> dict[str, list[int]]:
        if self._sock is None:
            self._sock = socket.create_connection(self._address)
            self._file = self._sock.makefile("rwb")
        try:
            self._file.write(
                json.dumps({"known": known, "wait": wait, "client": self._client}).encode() + b"\n"
            )
            self._file.flush()
            reply = json.loads(self._file.readline())
        except (OSError, ValueError):
            self.close()
            raise
        if "error" in reply:
            raise RuntimeError(f"ingestion log: {reply['error']}")
        return reply["heads"]

    def close(self) -> None:
        if self._sock is not None:
            self._file.close()
            self._sock.close()
            self._sock = self._file = None
