"""Real-time outputs (issue 41): rows leave Spark's real-time queries one by one and are logged
and delivered here, as ``OutputSink`` logs and delivers a micro-batch.

Spark's real-time mode allows no ``foreachBatch``, so a real-time query writes each row, as
one JSON text (``query_frame``), through the JVM ``foreach`` writer ``RowSender.java`` to the
``Receiver``, a loopback service beside the head service. A connection is one epoch's
partition. Whatever rows have arrived on it are one group: appended to the output's result
log with their place (epoch, partition, first row number), durably, then offered to the taps
(``OutputSink.take``), so labels, policies (``ON RESULT``), revocation, derived inputs and
resuming from a position are the micro-batch path's. At the epoch's end the receiver answers
``ok`` only once all its rows are logged: Spark commits an epoch only after that.

Exactly once, as designed: after a crash Spark runs an unfinished epoch again from its
start, with the same rows in the same order, so a row's place names it. ``Places`` keeps how
many rows of each (epoch, partition) the log holds, for the epochs the checkpoint has not
recorded committed, and the rows a replay sends again are skipped. A crash oracle (commit
905c174) shows replays that come under a later epoch, which this lets through twice;
real-time mode stays off (``realtime_slots = 0``) until that is fixed (docs/architecture.md).
"""

from __future__ import annotations

import io
import json
import logging
import socketserver
import threading
from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.json as pj

from server.runtime.outputs import PLACE_KEY, OutputSink
from server.runtime.resultlog import tail

log = logging.getLogger(__name__)
TIMESTAMP_FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX"  # microseconds, as the result log keeps them
TEXT_COLUMN = "_row"


@dataclass(frozen=True)
class Place:
    """Where a group of rows came: its epoch, its partition, its first row's number there."""

    epoch: int
    partition: int
    first: int

    def encoded(self) -> bytes:
        return f"{self.epoch},{self.partition},{self.first}".encode()

    @classmethod
    def decoded(cls, text: bytes) -> Place:
        epoch, partition, first = (int(v) for v in text.split(b","))
        return cls(epoch, partition, first)


def place_of(payload: bytes) -> Place | None:
    """A logged group's place; None for a micro-batch's."""
    metadata = pa.ipc.open_stream(payload).schema.metadata or {}
    return Place.decoded(metadata[PLACE_KEY]) if PLACE_KEY in metadata else None


class Places:
    """How many rows of each (epoch, partition) the result log holds, for the epochs after
    ``committed`` (the last the query's checkpoint records; older ones never run again)."""

    def __init__(self, committed: int | None = None) -> None:
        self.committed = -1 if committed is None else committed
        self._rows: dict[tuple[int, int], int] = {}

    def new_from(self, place: Place) -> int:
        """How many of a group's first rows the log holds already (a replay's)."""
        return max(0, self._rows.get((place.epoch, place.partition), 0) - place.first)

    def logged(self, place: Place, count: int) -> None:
        key = (place.epoch, place.partition)
        self._rows[key] = max(self._rows.get(key, 0), place.first + count)

    def committed_through(self, epoch: int | None) -> None:
        """Forget the epochs up to ``epoch``: Spark never runs a committed epoch again."""
        if epoch is not None and epoch > self.committed:
            self.committed = epoch
            self._rows = {k: n for k, n in self._rows.items() if k[0] > epoch}

    @classmethod
    def load(cls, sink: OutputSink, committed: int | None) -> Places:
        """The places of the log's groups of epochs after ``committed``, read from its tail
        (a longer tail until one group is of a committed epoch, or the log is read)."""
        places = cls(committed)
        rows = 1024
        while True:
            frames = tail(sink.location, sink.head, rows)
            found = [(place_of(f.payload), f.count) for f in frames]
            for place, count in found:
                if place is not None and place.epoch > places.committed:
                    places.logged(place, count)
            if sum(c for _, c in found) < rows or any(
                p is None or p.epoch <= places.committed for p, _ in found[:1]
            ):
                return places
            rows *= 4


class RealTimeOutput:
    """One real-time query's output: its groups, parsed, skipped where logged, then taken by
    its sink. ``committed()`` is the last epoch its checkpoint records committed."""

    def __init__(
        self, sink: OutputSink, schema: pa.Schema, committed: Callable[[], int | None]
    ) -> None:
        self.sink, self.schema, self.committed = sink, schema, committed
        self.places = Places.load(sink, committed())
        self._lock = threading.Lock()
        self._newest = self.places.committed
        self._closed = False

    def take(self, place: Place, lines: list[bytes]) -> None:
        """Log (durably), then offer, the rows of one group not logged yet."""
        with self._lock:
            if self._closed:
                raise ConnectionAbortedError(f"output {self.sink.name} has stopped")
            if place.epoch > self._newest:  # a new epoch: the ones before may be committed
                self._newest = place.epoch
                self.places.committed_through(self.committed())
            skip = self.places.new_from(place)
            if skip < len(lines):
                table = self.parse(lines[skip:])
                at = Place(place.epoch, place.partition, place.first + skip)
                self.sink.take(table, self.sink.last_batch_id + 1, at.encoded())
            self.places.logged(place, len(lines))

    def close(self) -> None:
        """Take no more groups (its query has stopped), once the one being taken is logged."""
        with self._lock:
            self._closed = True

    def parse(self, lines: list[bytes]) -> pa.Table:
        """The rows as the output's Arrow schema has them (what a micro-batch's ``toArrow``
        gives); a field missing from a row's text is null."""
        options = pj.ParseOptions(explicit_schema=self.schema, unexpected_field_behavior="error")
        table = pj.read_json(
            io.BytesIO(b"\n".join(lines)), pj.ReadOptions(use_threads=False), options
        )
        return table.select(self.schema.names).cast(self.schema)


class _Handler(socketserver.StreamRequestHandler):
    """One epoch's partition: a header line, rows, an empty line; then ``ok``."""

    def handle(self) -> None:
        receiver: Receiver = self.server.receiver  # type: ignore[attr-defined]
        try:
            header = json.loads(self.rfile.readline())
            output = receiver.output(header["output"])
            if output is None:
                raise LookupError(f"no real-time output {header['output']!r} runs here")
            first = 0
            place = (int(header["epoch"]), int(header["partition"]))
            for lines, ended in _groups(self.rfile):
                if lines:
                    output.take(Place(*place, first), lines)
                    first += len(lines)
                if ended:
                    self.wfile.write(b"ok\n")
                    return
        except Exception as exc:  # the writer fails its task with this; Spark retries it
            log.exception("a real-time output's rows were not taken")
            self.wfile.write(f"error: {exc}\n".encode())


def _groups(rfile):
    """The complete lines that have arrived, as groups (all those waiting, each time), and
    whether the empty line that ends the epoch came."""
    pending = b""
    while True:
        chunk = rfile.read1(1 << 20)
        if not chunk:
            raise ConnectionError("the writer went away before the epoch ended")
        pending += chunk
        *lines, pending = pending.split(b"\n")
        ended = b"" in lines
        yield lines[: lines.index(b"")] if ended else lines, ended
        if ended:
            return


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class Receiver:
    """Receives real-time queries' rows on 127.0.0.1 at an ephemeral port (``address``), for
    the outputs registered by the name their query's writer gives (``register``). It listens
    only from the first registration: a server that runs no real-time output opens no port."""

    def __init__(self) -> None:
        self._outputs: dict[str, RealTimeOutput] = {}
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self.address = ""

    def _listen(self) -> None:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.receiver = self  # type: ignore[attr-defined]
        host, port = server.server_address[:2]
        assert isinstance(host, str), "a TCP server's address is a host name"
        self.address = f"{host}:{port}"
        threading.Thread(target=server.serve_forever, name="row-receiver", daemon=True).start()
        self._server = server

    def register(self, name: str, output: RealTimeOutput) -> None:
        with self._lock:
            if self._server is None:
                self._listen()
            self._outputs[name] = output

    def forget(self, sink: OutputSink) -> None:
        """Refuse the rows of ``sink``'s output from now on (its query has stopped)."""
        with self._lock:
            names = [n for n, o in self._outputs.items() if o.sink is sink]
            gone = [self._outputs.pop(n) for n in names]
        for output in gone:
            output.close()

    def output(self, name: str) -> RealTimeOutput | None:
        with self._lock:
            return self._outputs.get(name)

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def arrow_schema(frame) -> pa.Schema:
    """The Arrow schema a micro-batch of ``frame`` comes back in (``DataFrame.toArrow``'s)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    (large,) = frame.sparkSession._jconf.getConfs(["spark.sql.execution.arrow.useLargeVarTypes"])
    return to_arrow_schema(
        frame.schema,
        error_on_duplicated_field_names_in_struct=True,
        timezone="UTC",
        prefers_large_types=large == "true",
    )


def query_frame(frame):
    """An output's frame as a real-time query writes it: each row one JSON text column."""
    from pyspark.sql import functions as F

    text = F.to_json(F.struct(*frame.columns), {"timestampFormat": TIMESTAMP_FORMAT})
    return frame.select(text.alias(TEXT_COLUMN))


def start_query(frame, receiver: Receiver, name: str, checkpoint: str, batch: str, query: str):
    """Start ``frame``'s real-time query: its rows to the receiver's output ``name``."""
    from pyspark.sql.streaming.query import StreamingQuery

    jvm = frame.sparkSession.sparkContext._jvm
    started = (
        query_frame(frame)
        ._jdf.writeStream()
        .foreach(jvm.sluice.sink.RowSender(receiver.address, name))
        .trigger(jvm.org.apache.spark.sql.streaming.Trigger.RealTime(batch))
        .outputMode("update")
        .option("checkpointLocation", checkpoint)
        .queryName(query)
        .start()
    )
    return StreamingQuery(started)
