"""The head service, spoken to as the JVM source speaks (``heads.py``): a query's sources are
asked one after another, so one's long poll ends when another has rows; a read with a limit
stops at a frame boundary and says where."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pyarrow as pa
import pytest
from runtime_helpers import TRADE

from boxes.arrowipc import ipc_bytes
from boxes.labels import LABEL_COLUMN
from boxes.levels import LEVEL_COLUMN
from boxes.punctuations.columns import DENIED_COLUMN
from server.ingest import IngestLog
from server.ingest.segments import Position
from server.runtime.heads import HeadServer, ResultLogs
from server.runtime.resultlog import open_log
from server.runtime.source import _columns, _source_schema
from server.runtime.storage import Location

POLL = 10.0  # the longest long poll (heads.MAX_WAIT): an answer well before it was woken


class Source:
    """One source's connection, saying hello for ``key`` (a stream, or ``@output``: its result
    log) in the query at ``checkpoint``."""

    def __init__(
        self, heads: HeadServer, log: IngestLog, key: str, checkpoint: str, **options: str
    ) -> None:
        host, port = heads.address.split(":")
        self.key = key
        self.sock = socket.create_connection((host, int(port)))
        self.lines = self.sock.makefile("rb")
        given = {
            "root": str(log.root),
            "streams": json.dumps([key]),
            "start": json.dumps({key: [0, 0, 0]}),
            "client": "c",
            "checkpoint": f"{checkpoint}/sources/{key}",
            **_source_schema(_columns(TRADE, (DENIED_COLUMN,))),
        }
        self.offset = self.ask({"op": "open", "options": {**given, **options}})["offset"]

    def ask(self, request: dict) -> dict:
        self.sock.sendall(json.dumps(request).encode() + b"\n")
        return json.loads(self.lines.readline())

    def latest(self, wait: float = POLL, meanwhile=lambda: None) -> float:
        """Ask for the end, as Spark does, and call ``meanwhile`` once asked; return the
        seconds the answer took."""
        started = time.monotonic()
        self.sock.sendall(
            json.dumps({"op": "latest", "offset": self.offset, "wait": wait}).encode() + b"\n"
        )
        meanwhile()
        self.offset = json.loads(self.lines.readline())["offset"]
        return time.monotonic() - started

    def read(self, start: str, end: str, limit: int | None = None) -> tuple[list[int], str]:
        """The ``_arrival`` of each row from ``start`` toward ``end`` and where the read ended."""
        asked = {"op": "read", "start": start, "end": end}
        reply = self.ask(asked if limit is None else {**asked, "limit": limit})
        body = self.lines.read(reply["bytes"])
        table = pa.ipc.open_stream(body).read_all() if body else None
        return ([] if table is None else table["_arrival"].to_pylist()), reply["end"]

    def close(self) -> None:
        self.lines.close()
        self.sock.close()


class World:
    """An ingestion log (streams a to d), a result log (output ``o``, read under ``@o``) and the
    head service over both."""

    def __init__(self, root: Path) -> None:
        self.log = IngestLog(root / "logs")
        for name in ("a", "b", "c", "d"):
            self.log.create_stream(name, TRADE)
        self.results = ResultLogs()
        self.results.advanced("o", Location.of(root / "o"), Position(0, 0, 0))
        self.heads = HeadServer(self.log, self.results)
        self.opened: list[Source] = []

    def query(self, checkpoint: str = "q", keys=("a", "b")) -> tuple[Source, Source]:
        """Two sources (of ``keys``) of the query at ``checkpoint``, each answered once already
        (a first answer comes at once)."""
        pair = [Source(self.heads, self.log, key, checkpoint) for key in keys]
        self.opened.extend(pair)
        assert max(source.latest() for source in pair) < 1.0
        return pair[0], pair[1]

    def append(self, stream: str):
        """Append a tuple to ``stream``: while a long poll waits, or just before it begins (the
        rows are past the other source's last answer either way)."""
        row = {"time": "2026-01-01T00:00:00Z", "symbol": "x", "price": 1.0}
        return lambda: self.log.append(stream, [row])

    def close(self) -> None:
        for source in self.opened:
            source.close()
        self.heads.close()
        self.log.close()


@pytest.fixture
def world(tmp_path):
    made = World(tmp_path)
    yield made
    made.close()


def test_a_long_poll_ends_when_another_source_of_its_query_has_rows(world):
    a, b = world.query()
    assert a.latest(meanwhile=world.append("b")) < POLL / 2  # a's own log did not grow
    assert b.latest() < 1.0


def test_a_long_poll_ends_when_a_result_log_its_query_reads_moves(world):
    a, derived = world.query(keys=("a", "@o"))

    def moved() -> None:
        world.results.advanced("o", Location.of("o"), Position(3, 0, 99))

    assert a.latest(meanwhile=moved) < POLL / 2
    assert derived.latest() < 1.0


def test_a_long_poll_ends_at_once_after_another_source_answered_with_rows(world):
    """The batch starts only when the last source has answered."""
    a, b = world.query()
    world.append("a")()
    assert a.latest() < 1.0
    assert b.latest() < 1.0


def test_rows_of_another_query_do_not_end_a_long_poll(world):
    a, _ = world.query("q")
    _, other = world.query("elsewhere", ("c", "d"))
    assert a.latest(wait=2.0, meanwhile=world.append("d")) >= 2.0
    assert other.latest() < 1.0


def test_after_a_batch_that_read_rows_every_source_of_the_query_answers_at_once_once(world):
    """The batch may have moved the watermark past a window's end; Spark runs the no-data
    batch that emits the window only once its sources have answered."""
    a, b = world.query()
    world.append("a")()
    assert a.latest() < 1.0  # rows: Spark runs a batch, then asks again from their end
    assert b.latest() < 1.0
    assert a.latest() < 1.0  # the first question after the batch
    assert b.latest() < 1.0  # its peer's batch read rows
    assert a.latest(wait=2.0) >= 2.0  # nothing has happened since: a long poll again
    assert b.latest(wait=2.0) >= 2.0


def read_in_chunks(source: Source) -> None:
    """Frames of 2, 2 and 3 rows read with limits: a frame is never split, a chunk holds at
    least one, and a read that reaches the end answers it as asked."""
    start = source.offset
    source.latest()
    end = source.offset
    first, after_first = source.read(start, end, limit=3)  # 2 + 2 rows would pass 3
    assert first == [0, 1] and json.loads(after_first)[source.key]["seq"] == 2
    second, after_second = source.read(after_first, end, limit=3)
    assert second == [2, 3] and json.loads(after_second)[source.key]["seq"] == 4
    assert source.read(after_second, end, limit=1) == ([4, 5, 6], end)  # a 3-row frame whole
    assert source.read(start, end) == ([0, 1, 2, 3, 4, 5, 6], end)  # no limit: the whole range
    assert source.read(start, end, limit=100) == ([0, 1, 2, 3, 4, 5, 6], end)


def test_a_read_with_a_limit_ends_at_a_frame_boundary_a_later_read_resumes_at(world):
    source = Source(world.heads, world.log, "a", "q")
    world.opened.append(source)
    row = {"time": "2026-01-01T00:00:00Z", "symbol": "x", "price": 1.0}
    for count in (2, 2, 3):
        world.log.append("a", [row] * count)
    read_in_chunks(source)


def test_a_read_of_a_result_log_with_a_limit_ends_at_a_frame_boundary_too(world, tmp_path):
    """A derived input reads another output's result log (``@o``) the same way."""
    results = open_log(tmp_path / "o", segment_bytes=1)  # a segment a frame: boundaries cross
    for count in (2, 2, 3):
        table = pa.table(
            {
                "time": pa.array([0] * count, pa.timestamp("us", "UTC")),
                "symbol": ["x"] * count,
                "price": [1.0] * count,
                LABEL_COLUMN: pa.array([1] * count, pa.int64()),
            }
        )
        head = results.append(count, ipc_bytes(table))
    results.close()
    world.results.advanced("o", Location.of(tmp_path / "o"), head)
    columns = [*TRADE.names, LEVEL_COLUMN, DENIED_COLUMN, LABEL_COLUMN]
    source = Source(
        world.heads,
        world.log,
        "@o",
        "q",
        dirs=json.dumps({"@o": str(tmp_path / "o")}),
        columns=json.dumps(columns),
        **_source_schema(_columns(TRADE, (DENIED_COLUMN,), 1)),
    )
    world.opened.append(source)
    read_in_chunks(source)
