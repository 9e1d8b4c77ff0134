"""A loopback service that tells Spark sources where each stream's durable log ends.

Spark runs the Python source's ``read`` (``source.LogReader``, a
``SimpleDataSourceStreamReader``) in a driver-side Python process of its own, so the source
cannot share memory with the ingestion log. It asks here instead, over one kept-open
connection, and the answer is a long poll: it comes back as soon as a stream grows, or after
the wait expires. That gives low latency without spinning when a query is idle.

Protocol, one JSON line each way: ``{"known": {stream: seq}, "wait": seconds}`` ->
``{"heads": {stream: [seq, seg, pos]}}`` or ``{"error": message}``.

A derived input reads another diagram's result log instead (``ResultLogs``); it asks about
keys that name an output (``@out1``, ``result_key``) and gets that log's heads, the same way.
"""

from __future__ import annotations

import json
import socket
import socketserver
import threading
from collections.abc import Mapping

from server.ingest.log import IngestLog
from server.ingest.segments import Position
from server.runtime.storage import Location

MAX_WAIT = 5.0
RESULTS = "@"  # a key naming an output's result log, not a stream (no name starts with it)


def result_key(output: str) -> str:
    """The key a derived input reads ``output``'s result log under (offsets, claims, heads)."""
    return RESULTS + output


class ResultLogs:
    """Where each output deployed here keeps its result log and where that log ends: what a
    derived input reads (by row position, like a stream) and long-polls. An output stays
    known after its diagram stops (its log is still on disk) until the diagram is removed."""

    def __init__(self) -> None:
        self._logs: dict[str, tuple[Location, Position]] = {}
        self._changed = threading.Condition()

    def advanced(self, output: str, location: Location, head: Position) -> None:
        with self._changed:
            self._logs[result_key(output)] = (location, head)
            self._changed.notify_all()

    def forget(self, output: str) -> None:
        with self._changed:
            self._logs.pop(result_key(output), None)

    def directory(self, output: str) -> Location | None:
        with self._changed:
            known = self._logs.get(result_key(output))
        return None if known is None else known[0]

    def heads(self, keys: list[str]) -> dict[str, Position]:
        with self._changed:
            missing = [k for k in keys if k not in self._logs]
            if missing:
                raise KeyError(f"no result log deployed for {', '.join(missing)}")
            return {k: self._logs[k][1] for k in keys}

    def wait_for_change(self, known: Mapping[str, int], timeout: float) -> dict[str, Position]:
        """The heads as soon as one log is past ``known[key]``, or after ``timeout``."""
        with self._changed:
            self._changed.wait_for(
                lambda: any(h.seq > known[k] for k, h in self.heads(list(known)).items()), timeout
            )
            return self.heads(list(known))


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        log: IngestLog = self.server.log  # type: ignore[attr-defined]
        results: ResultLogs = self.server.results  # type: ignore[attr-defined]
        first = True
        for line in self.rfile:
            try:
                request = json.loads(line)
                if first:
                    self.server.arrived(request.get("client", ""))  # type: ignore[attr-defined]
                    first = False
                wait = min(float(request.get("wait", 0)), MAX_WAIT)
                known = {k: int(v) for k, v in request["known"].items()}
                derived = bool(known) and all(k.startswith(RESULTS) for k in known)
                heads = (results if derived else log).wait_for_change(known, wait)
                reply = {"heads": {name: pos.to_list() for name, pos in heads.items()}}
            except Exception as exc:  # the reply carries the reason to the Spark source
                reply = {"error": str(exc)}
            self.wfile.write(json.dumps(reply).encode() + b"\n")
            self.wfile.flush()


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class HeadServer:
    """Serves ``log``'s heads (and ``results``') on 127.0.0.1 at an ephemeral port (``address``).

    It also counts the sources that have connected per client name: a source's first request
    proves Spark has started its Python process, which the runner waits for (see
    ``wait_for_clients``).
    """

    def __init__(self, log: IngestLog, results: ResultLogs | None = None) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.log = log  # type: ignore[attr-defined]
        self._server.results = results or ResultLogs()  # type: ignore[attr-defined]
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
