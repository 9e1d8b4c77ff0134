"""Real-time outputs (issue 41): rows leave Spark's real-time queries one by one and are logged
and delivered here, as ``OutputSink`` logs and delivers a micro-batch.

Spark's real-time mode allows no ``foreachBatch``, so a real-time query writes each row, as
one JSON text (``query_frame``), through the JVM ``foreach`` writer ``RowSender.java`` to the
``Receiver``, a loopback service beside the head service. A connection is one epoch's
partition. Whatever rows have arrived on it are one group: appended to the output's result
log with how far the output has read each stream (below), durably, then offered to the taps
(``OutputSink.take``), so labels, policies (``ON RESULT``), revocation, derived inputs and
resuming from a position are the micro-batch path's. At the epoch's end the receiver answers
``ok`` only once all its rows are logged: Spark commits an epoch only after that.

Exactly once: a row is named by where the input row it came from is in its stream's log (its
stream and ``_arrival``, which the writer gets from the task's reader: ``Handed.java``).
Each stream is read by one source in one partition, in log order, so the rows of a stream
come in that order, and a replay (a batch a crash cut short, run again from its start, under
its own number or a later one) starts no later than the first row not logged. So the output
keeps, per stream, the number of the last row whose result the log holds
(``RealTimeOutput.read``), logged with each group (frame metadata ``sluice.read``), and skips
every row at or before it. Epoch numbers play no part.
"""

from __future__ import annotations

import io
import json
import logging
import socketserver
import threading

import pyarrow as pa
import pyarrow.json as pj

from server.runtime.outputs import READ_KEY, OutputSink
from server.runtime.resultlog import tail

log = logging.getLogger(__name__)
TIMESTAMP_FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX"  # microseconds, as the result log keeps them
TEXT_COLUMN = "_row"


def read_of(payload: bytes) -> dict[str, int]:
    """How far a logged group's output had read: per stream, the number of the last row whose
    result the log holds (``RealTimeOutput.read``); empty for a micro-batch's."""
    metadata = pa.ipc.open_stream(payload).schema.metadata or {}
    return json.loads(metadata[READ_KEY]) if READ_KEY in metadata else {}


def row_of(line: bytes) -> tuple[str, int, bytes]:
    """A row as ``RowSender`` sends it: its input's stream, its input's row number there, and
    the row's JSON text."""
    stream, seq, text = line.split(b"\t", 2)
    return stream.decode(), int(seq), text


class RealTimeOutput:
    """One real-time query's output: its groups, parsed, skipped where logged, then taken by
    its sink. ``read`` is, per stream, the number of the last row whose result is logged,
    as the log's last group says (each says it for all the output's streams)."""

    def __init__(self, sink: OutputSink, schema: pa.Schema) -> None:
        self.sink, self.schema = sink, schema
        last = tail(sink.location, sink.head, 1)
        self.read = read_of(last[-1].payload) if last else {}
        self._lock = threading.Lock()
        self._closed = False

    def take(self, lines: list[bytes]) -> None:
        """Log (durably), then offer, the rows of one group not logged yet."""
        with self._lock:
            if self._closed:
                raise ConnectionAbortedError(f"output {self.sink.name} has stopped")
            read, fresh = dict(self.read), []
            for stream, seq, text in map(row_of, lines):
                if seq > read.get(stream, -1):
                    read[stream] = seq
                    fresh.append(text)
            if fresh:
                logged = json.dumps(read, sort_keys=True).encode()
                self.sink.take(self.parse(fresh), self.sink.last_batch_id + 1, logged)
            self.read = read

    def close(self) -> None:
        """Take no more groups (its query has stopped), once the one being taken is logged."""
        with self._lock:
            self._closed = True

    def parse(self, lines: list[bytes]) -> pa.Table:
        """The rows as the output's Arrow schema has them (what a micro-batch's ``toArrow``
        gives); a field missing from a row's text is null. Floating-point fields come as
        text (``query_frame``), which the cast reads back."""
        options = pj.ParseOptions(
            explicit_schema=text_schema(self.schema), unexpected_field_behavior="error"
        )
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
            for lines, ended in _groups(self.rfile):
                if lines:
                    output.take(lines)
                if ended:
                    self.wfile.write(b"ok\n")
                    return
        except WriterGone as gone:  # its query stopped, or Spark retries its task: no fault
            log.info("a real-time writer left mid-epoch: %s", gone)
        except Exception as exc:  # the writer fails its task with this; Spark retries it
            log.exception("a real-time output's rows were not taken")
            self.wfile.write(f"error: {exc}\n".encode())


class WriterGone(Exception):
    """The writer's connection ended before its epoch did: its task was cancelled (its query
    stopped) or failed, and what it did not see acknowledged comes again with the epoch."""


def _groups(rfile):
    """The complete lines that have arrived, as groups (all those waiting, each time), and
    whether the empty line that ends the epoch came."""
    pending = b""
    while True:
        chunk = rfile.read1(1 << 20)
        if not chunk:
            raise WriterGone("the writer went away before the epoch ended")
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


def text_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with its floating-point fields as text: JSON has no NaN or infinity, which
    Spark's ``to_json`` writes as the strings "NaN" and "Infinity" beside numbers for the
    rest, a column of two kinds no JSON reader takes; as text both read back exactly
    (Spark's cast of a double to text round-trips, and so does Arrow's cast back)."""
    return pa.schema(
        [f.with_type(pa.string()) if pa.types.is_floating(f.type) else f for f in schema]
    )


def query_frame(frame):
    """An output's frame as a real-time query writes it: each row one JSON text column, its
    floating-point fields as text (``text_schema``)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    floating = (T.FloatType, T.DoubleType)
    columns = [
        frame[f.name].cast("string").alias(f.name)
        if isinstance(f.dataType, floating)
        else frame[f.name]
        for f in frame.schema.fields
    ]
    text = F.to_json(F.struct(*columns), {"timestampFormat": TIMESTAMP_FORMAT})
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
