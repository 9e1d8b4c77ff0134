"""A loopback service that serves Spark's sources: where each log ends, and its rows.

Sluice's source runs in Spark's JVM (``java/``); everything it reads it asks for here, over
one kept-open connection per source, so the reading (segments, result logs, policy words)
stays in the server's Python and a query needs no Python process. Asking where the logs end
is a long poll: the answer comes as soon as a stream grows, or after the wait expires. That
gives low latency without spinning when a query is idle.

Protocol, one JSON line each way (``{"error": message}`` for any failure):
``{"op": "open", "options": {...}}`` -> ``{"offset": initial}`` (the source's options,
``source.py``; the first request of every connection); ``{"op": "latest", "offset": known,
"wait": seconds}`` -> ``{"offset": end}``; ``{"op": "read", "start": offset, "end":
offset}`` -> ``{"bytes": n, "rows": r}`` followed by ``n`` bytes, an Arrow IPC stream of the
rows. Offsets are JSON text (``source.SourceRows``).

A derived input reads another diagram's result log instead (``ResultLogs``); it asks about
keys that name an output (``@out1``, ``result_key``) and gets that log's heads, the same way.
"""

from __future__ import annotations

import json
import socketserver
import threading
from collections.abc import Mapping

from boxes.arrowipc import ipc_bytes
from boxes.errors import SluiceError
from server.ingest.log import IngestLog
from server.ingest.segments import Position
from server.runtime.source import SourceRows
from server.runtime.storage import Location

MAX_WAIT = 10.0  # seconds: the longest long poll a source may ask (RuntimeSettings.poll_seconds)
RESULTS = "@"  # a key naming an output's result log, not a stream (no name starts with it)


def result_key(output: str) -> str:
    """The key a derived input reads ``output``'s result log under (offsets, claims, heads)."""
    return RESULTS + output


class ResultLogs:
    """Where each output deployed here keeps its result log and where that log ends: what a
    derived input reads (by row position, like a stream) and long-polls. An output stays
    known after its diagram stops (its log is still on disk) until the diagram is removed. A
    member of a shared execution's output is an alias of its host's (``sharing.py``): a
    derived input reads the host's log, at the host's positions."""

    def __init__(self) -> None:
        self._logs: dict[str, tuple[Location, Position]] = {}
        self._aliases: dict[str, str] = {}  # a member's output's key -> its host output's
        self._changed = threading.Condition()

    def advanced(self, output: str, location: Location, head: Position) -> None:
        with self._changed:
            self._logs[result_key(output)] = (location, head)
            self._changed.notify_all()

    def alias(self, output: str, host_output: str) -> None:
        with self._changed:
            self._aliases[result_key(output)] = result_key(host_output)
            self._changed.notify_all()

    def forget(self, output: str) -> None:
        with self._changed:
            self._logs.pop(result_key(output), None)
            self._aliases.pop(result_key(output), None)

    def keys(self, output: str) -> list[str]:
        """The keys ``output``'s log is read under: its own and its aliases'."""
        own = result_key(output)
        with self._changed:
            return [own, *(alias for alias, host in self._aliases.items() if host == own)]

    def directory(self, output: str) -> Location | None:
        with self._changed:
            known = self._logs.get(self._resolved(result_key(output)))
        return None if known is None else known[0]

    def heads(self, keys: list[str]) -> dict[str, Position]:
        with self._changed:
            missing = [k for k in keys if self._resolved(k) not in self._logs]
            if missing:
                raise KeyError(f"no result log deployed for {', '.join(missing)}")
            return {k: self._logs[self._resolved(k)][1] for k in keys}

    def _resolved(self, key: str) -> str:
        return self._aliases.get(key, key)

    def wait_for_change(self, known: Mapping[str, int], timeout: float) -> dict[str, Position]:
        """The heads as soon as one log is past ``known[key]``, or after ``timeout``."""
        with self._changed:
            self._changed.wait_for(
                lambda: any(h.seq > known[k] for k, h in self.heads(list(known)).items()), timeout
            )
            return self.heads(list(known))


class _Handler(socketserver.StreamRequestHandler):
    """One source's connection: ``open`` first, then ``latest`` and ``read`` in any order."""

    def handle(self) -> None:
        source: SourceRows | None = None
        for line in self.rfile:
            rows = b""
            try:
                request = json.loads(line)
                if source is None:
                    source = self._open(request)
                    reply: dict = {"offset": source.initial()}
                elif request["op"] == "latest":
                    reply = {"offset": self._latest(source, request)}
                elif request["op"] == "read":
                    table = source.between(request["start"], request["end"])
                    rows = ipc_bytes(table) if table.num_rows else b""
                    reply = {"bytes": len(rows), "rows": table.num_rows}
                else:
                    raise ValueError(f"unknown request {request['op']!r}")
            except SluiceError as exc:  # the reply carries the reason to the Spark source
                reply, rows = {"error": str(exc)}, b""
            except Exception as exc:
                reply, rows = {"error": f"{type(exc).__name__}: {exc}"}, b""
            self.wfile.write(json.dumps(reply).encode() + b"\n" + rows)
            self.wfile.flush()

    def _open(self, request: dict) -> SourceRows:
        if request.get("op") != "open":
            raise ValueError("a source says who it is first (op: open)")
        source = SourceRows(request["options"])
        self.server.arrived(source.client)  # type: ignore[attr-defined]
        return source

    def _latest(self, source: SourceRows, request: dict) -> str:
        log: IngestLog = self.server.log  # type: ignore[attr-defined]
        results: ResultLogs = self.server.results  # type: ignore[attr-defined]
        wait = min(float(request.get("wait", 0)), MAX_WAIT)
        known = source.known(request["offset"])
        derived = bool(known) and all(k.startswith(RESULTS) for k in known)
        return source.offset((results if derived else log).wait_for_change(known, wait))


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class HeadServer:
    """Serves ``log``'s heads (and ``results``') on 127.0.0.1 at an ephemeral port (``address``).

    It also counts the sources that have said hello per client name: a source's first request
    proves Spark has started the query's stream, which the runner waits for (see
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
