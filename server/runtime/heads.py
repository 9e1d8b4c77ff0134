"""A loopback service that serves Spark's sources: where each log ends, and its rows.

Sluice's source runs in Spark's JVM (``java/``); everything it reads it asks for here, over
one kept-open connection per source, so the reading (segments, result logs, policy words)
stays in the server's Python and a query needs no Python process. Asking where the logs end
is a long poll: the answer comes as soon as a stream grows, or after the wait expires. That
gives low latency without spinning when a query is idle. A query with several sources (one per
schema, one per derived input) asks them one after another in one thread, so a source's long
poll also ends when another source of its query has rows (``Queries``).

Protocol, one JSON line each way (``{"error": message}`` for any failure):
``{"op": "open", "options": {...}}`` -> ``{"offset": initial}`` (the source's options,
``source.py``, and ``checkpoint``, the source's directory in its query's checkpoint; the first
request of every connection); ``{"op": "latest", "offset": known,
"wait": seconds}`` -> ``{"offset": end}``; ``{"op": "read", "start": offset, "end":
offset, "limit": rows}`` -> ``{"bytes": n, "rows": r, "end": offset}`` followed by ``n``
bytes, an Arrow IPC stream of the rows. Without ``limit`` a read is the whole range and its
``end`` the one asked; with one it stops at a frame boundary after at most ``limit`` rows of
each stream (at least one frame) and ``end`` says where: the real-time reader reads a range
far behind in such chunks, so an epoch that ends meanwhile ends where its rows did
(``RealTimeLogStream.java``). Offsets are JSON text (``source.SourceRows``).

A derived input reads another diagram's result log instead (``ResultLogs``); it asks about
keys that name an output (``@out1``, ``result_key``) and gets that log's heads, the same way.
"""

from __future__ import annotations

import json
import socketserver
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

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
        self._lock = threading.Lock()
        self.on_change: Callable[[list[str]], None] = lambda keys: None  # a Queries' wake-up

    def advanced(self, output: str, location: Location, head: Position) -> None:
        with self._lock:
            self._logs[result_key(output)] = (location, head)
        self.on_change(self.keys(output))

    def alias(self, output: str, host_output: str) -> None:
        with self._lock:
            self._aliases[result_key(output)] = result_key(host_output)
        self.on_change(self.keys(host_output))

    def forget(self, output: str) -> None:
        with self._lock:
            self._logs.pop(result_key(output), None)
            self._aliases.pop(result_key(output), None)

    def keys(self, output: str) -> list[str]:
        """The keys ``output``'s log is read under: its own and its aliases'."""
        own = result_key(output)
        with self._lock:
            return [own, *(alias for alias, host in self._aliases.items() if host == own)]

    def directory(self, output: str) -> Location | None:
        with self._lock:
            known = self._logs.get(self._resolved(result_key(output)))
        return None if known is None else known[0]

    def heads(self, keys: list[str]) -> dict[str, Position]:
        with self._lock:
            missing = [k for k in keys if self._resolved(k) not in self._logs]
            if missing:
                raise KeyError(f"no result log deployed for {', '.join(missing)}")
            return {k: self._logs[self._resolved(k)][1] for k in keys}

    def _resolved(self, key: str) -> str:
        return self._aliases.get(key, key)


@dataclass(eq=False)
class _Source:
    """One connected source: its query, its rows, the row counts of its last answer (None
    before its first), whether that answer had rows for the batch, where its last question
    started (None before its first), whether that question came after a batch that read rows
    and whether it is in a long poll now."""

    query: str
    rows: SourceRows
    told: dict[str, int] | None = None
    moved: bool = False
    asked: Mapping[str, int] | None = None
    after_batch: bool = False
    waiting: bool = False
    # when each stream last had rows the query had not read (``time.monotonic``), from the
    # source's hello on: how long a stream has been idle (``source.SourceRows``)
    moved_at: dict[str, float] = field(default_factory=dict)

    @property
    def keys(self) -> list[str]:
        return self.rows.streams

    def idle(self) -> set[str]:
        """The streams that have not moved for the source's idle time."""
        now = time.monotonic()
        return {k for k, at in self.moved_at.items() if now - at >= self.rows.idle}


class Queries:
    """The connected sources by query, and their long polls.

    Spark asks a query's sources for their ends one after another, in the query's one thread:
    while one long-polls, rows that arrive for another would wait for that poll to expire
    (``poll_seconds``), and so would the rows another has just answered with, since the batch
    starts after the last source answers. So a long poll also ends as soon as another source
    of its query has answered with rows or has rows past its answer. A source in a long poll
    itself is not counted: it answers for itself, and only a source whose query is gone can be
    waiting while another is asked. The first answer to a source comes at once: its query's
    next sources say hello only after it. After a batch that read rows, every source of the
    query answers at once, once: that batch may have moved the watermark past a window's end,
    and Spark runs the no-data batch that emits the window only after its sources answer
    (otherwise the window's results would wait a whole long poll). Every long poll waits on the
    ingestion log's condition; a result log that moves notifies it only if a source reads that
    log (every output's every batch waking every idle source would cost a lot at a thousand
    diagrams).
    """

    def __init__(self, log: IngestLog, results: ResultLogs) -> None:
        self.log, self.results = log, results
        self._changed = log.changed
        self._by_query: dict[str, list[_Source]] = {}
        self._read: Counter[str] = Counter()  # result keys, by how many sources read them
        results.on_change = self._results_moved

    def join(self, query: str, rows: SourceRows) -> _Source:
        source = _Source(query, rows, moved_at=dict.fromkeys(rows.streams, time.monotonic()))
        with self._changed:
            self._by_query.setdefault(query, []).append(source)
            self._read.update(k for k in source.keys if k.startswith(RESULTS))
        return source

    def leave(self, source: _Source) -> None:
        with self._changed:
            peers = self._by_query[source.query]
            peers.remove(source)
            if not peers:
                del self._by_query[source.query]
            self._read.subtract(k for k in source.keys if k.startswith(RESULTS))
            self._read += Counter()  # drops the keys no source reads now

    def _results_moved(self, keys: list[str]) -> None:
        with self._changed:
            if any(self._read[k] for k in keys):
                self._changed.notify_all()

    def heads(self, keys: list[str]) -> dict[str, Position]:
        derived = bool(keys) and all(k.startswith(RESULTS) for k in keys)
        return (self.results if derived else self.log).heads(keys)

    def _past(self, keys: list[str], counts: Mapping[str, int]) -> bool:
        return any(h.seq > counts[k] for k, h in self.heads(keys).items())

    def _at_once(self, source: _Source) -> bool:
        """Whether ``source`` answers without a long poll: its first answer, or the first after
        a batch of its query read rows (its start moved, or a peer's did this round)."""
        if source.told is None or source.after_batch:
            return True
        peers = self._by_query.get(source.query, ())
        return any(peer.after_batch for peer in peers if peer is not source)

    def _peer_has_rows(self, source: _Source) -> bool:
        for peer in self._by_query.get(source.query, ()):
            if peer is source or peer.waiting or peer.told is None:
                continue
            if peer.moved:
                return True
            try:
                if self._past(peer.keys, peer.told):
                    return True
            except (KeyError, SluiceError):  # its log is gone: its own answer says so
                return True
        return False

    def latest(self, source: _Source, known: Mapping[str, int], wait: float) -> dict[str, Position]:
        """``source``'s heads as soon as one is past ``known`` or a peer has rows, or after
        ``wait`` seconds."""
        with self._changed:
            source.after_batch = source.asked is not None and known != source.asked
            source.asked = known
            source.waiting = True
            try:
                self._changed.wait_for(
                    lambda: self._past(source.keys, known) or self._peer_has_rows(source),
                    0 if self._at_once(source) else wait,
                )
            finally:
                source.waiting = False
            heads = self.heads(source.keys)
            source.told = {k: h.seq for k, h in heads.items()}
            source.moved = any(source.told[k] > known[k] for k in known)
            now = time.monotonic()
            source.moved_at.update((k, now) for k in known if source.told[k] > known[k])
            return heads


class _Handler(socketserver.StreamRequestHandler):
    """One source's connection: ``open`` first, then ``latest`` and ``read`` in any order."""

    def handle(self) -> None:
        source: _Source | None = None
        try:
            for line in self.rfile:
                rows = b""
                try:
                    request = json.loads(line)
                    if source is None:
                        source = self._open(request)
                        reply: dict = {"offset": source.rows.initial()}
                    elif request["op"] == "latest":
                        reply = {"offset": self._latest(source, request)}
                    elif request["op"] == "read":
                        table, end = source.rows.between(
                            request["start"], request["end"], request.get("limit")
                        )
                        rows = ipc_bytes(table) if table.num_rows else b""
                        reply = {"bytes": len(rows), "rows": table.num_rows, "end": end}
                    else:
                        raise ValueError(f"unknown request {request['op']!r}")
                except SluiceError as exc:  # the reply carries the reason to the Spark source
                    reply, rows = {"error": str(exc)}, b""
                except Exception as exc:
                    reply, rows = {"error": f"{type(exc).__name__}: {exc}"}, b""
                self.wfile.write(json.dumps(reply).encode() + b"\n" + rows)
                self.wfile.flush()
        finally:
            if source is not None:
                self.server.queries.leave(source)  # type: ignore[attr-defined]

    def _open(self, request: dict) -> _Source:
        if request.get("op") != "open":
            raise ValueError("a source says who it is first (op: open)")
        rows = SourceRows(request["options"])
        # Its query is its checkpoint's directory; without one, the connection has no peers.
        query = request["options"].get("checkpoint", "").rpartition("/sources/")[0]
        queries: Queries = self.server.queries  # type: ignore[attr-defined]
        source = queries.join(query or f"connection {id(self)}", rows)
        self.server.arrived(rows.client)  # type: ignore[attr-defined]
        return source

    def _latest(self, source: _Source, request: dict) -> str:
        queries: Queries = self.server.queries  # type: ignore[attr-defined]
        wait = min(float(request.get("wait", 0)), MAX_WAIT)
        known = source.rows.known(request["offset"])
        heads = queries.latest(source, known, wait)
        return source.rows.offset(request["offset"], heads, source.idle())


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
        results = results or ResultLogs()
        self._server.queries = Queries(log, results)  # type: ignore[attr-defined]
        self._server.arrived = self._arrived  # type: ignore[attr-defined]
        self._clients: dict[str, int] = {}
        self._connected = threading.Condition()
        host, port = self._server.server_address[:2]
        assert isinstance(host, str), "a TCP server's address is a host name"
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
