"""The durable ingestion log: one segment log per input stream, written with group commit.

``append`` checks and encodes a batch in the caller's thread, then hands it to one writer
thread. The writer takes every batch waiting, writes each as a frame, flushes every touched
file once (``fdatasync``) and only then acknowledges them all and publishes the new heads:
many small concurrent appends share one disk flush, and a published head never points past
durable data. Readers (the Spark source) learn heads through ``heads``/``wait_for_change``.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from boxes import codes
from boxes.errors import Conflict, InvalidInput, NotFound, SluiceError
from boxes.types import Schema, parse_schema
from server.ingest.acks import AckTimes
from server.ingest.durable import make_dirs_durably, write_durably
from server.ingest.encode import Limits, encode
from server.ingest.segments import Position, SegmentLog

STREAM_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
SCHEMA_FILE = "schema.json"


@dataclass(frozen=True)
class AppendReceipt:
    """What a durable append returns: the arrival order given to its first tuple, and how many."""

    stream: str
    first_seq: int
    count: int


class _Pending:
    __slots__ = ("stream", "count", "payload", "done", "receipt", "error")

    def __init__(self, stream: str, count: int, payload: bytes) -> None:
        self.stream, self.count, self.payload = stream, count, payload
        self.done = threading.Event()
        self.receipt: AppendReceipt | None = None
        self.error: BaseException | None = None


class IngestLog:
    """Every input stream's log under ``root`` (``root/<stream>/``)."""

    def __init__(
        self, root: Path, limits: Limits = Limits(), segment_bytes: int = 64 << 20
    ) -> None:
        self.root = Path(root)
        self.limits = limits
        self.segment_bytes = segment_bytes
        make_dirs_durably(self.root)
        self._schemas: dict[str, Schema] = {}
        self._logs: dict[str, SegmentLog] = {}
        self._heads: dict[str, Position] = {}
        self._acks: dict[str, AckTimes] = {}  # when each recent head was acknowledged
        self._lock = threading.Lock()  # guards the dicts above and the segment logs
        self._changed = threading.Condition()  # notified whenever heads move
        self._queue: list[_Pending] = []
        self._queued = threading.Condition()
        self._closing = False
        self.commits = 0  # group commits so far (each one flush per file)
        for directory in sorted(p for p in self.root.iterdir() if (p / SCHEMA_FILE).exists()):
            self._open_stream(directory.name, self._load_schema(directory))
        self._writer = threading.Thread(target=self._write_loop, name="ingest-writer", daemon=True)
        self._writer.start()

    @staticmethod
    def _load_schema(directory: Path) -> Schema:
        schema, problems = parse_schema(
            json.loads((directory / SCHEMA_FILE).read_text()), directory.name
        )
        if schema is None:
            raise SluiceError(code=codes.LOG_CORRUPT, directory=directory, problems=problems)
        return schema

    def _open_stream(self, name: str, schema: Schema) -> None:
        log = SegmentLog(self.root / name, self.segment_bytes)
        self._schemas[name], self._logs[name], self._heads[name] = schema, log, log.head
        self._acks[name] = AckTimes()

    # -- streams ---------------------------------------------------------------------------
    def create_stream(self, name: str, schema: Schema) -> None:
        """Create an empty log; creating an existing stream again with the same schema is a
        no-op."""
        if not isinstance(name, str) or not STREAM_NAME.match(name):
            raise InvalidInput(
                f"stream name {name!r} must start with a letter and contain only "
                "letters, digits and '_' (at most 64 characters)",
                code=codes.INVALID_NAME,
            )
        with self._lock:
            existing = self._schemas.get(name)
            if existing is not None:
                if existing != schema:
                    raise Conflict(code=codes.STREAM_EXISTS, name=name)
                return
            directory = self.root / name
            make_dirs_durably(directory)
            write_durably(directory / SCHEMA_FILE, json.dumps(schema.to_dict()))
            self._open_stream(name, schema)

    def drop_stream(self, name: str) -> None:
        with self._lock:
            self._require(name)
            self._logs.pop(name).close()
            del self._schemas[name], self._heads[name], self._acks[name]
            shutil.rmtree(self.root / name)

    def schemas(self) -> dict[str, Schema]:
        with self._lock:
            return dict(self._schemas)

    def schema(self, name: str) -> Schema:
        with self._lock:
            return self._require(name)

    def _require(self, name: str) -> Schema:
        schema = self._schemas.get(name)
        if schema is None:
            raise NotFound(details={"stream": name}, what="input stream", name=name)
        return schema

    # -- appending -------------------------------------------------------------------------
    def append(self, name: str, tuples: list[Mapping[str, Any]], level: int = 0) -> AppendReceipt:
        """Check, encode and durably append a batch; return once it is on disk. A ``level``
        (Chinese-Wall label bits, decided at admission) is written with every tuple."""
        schema = self.schema(name)
        now = datetime.now(timezone.utc)
        count, payload = encode(name, schema, tuples, now, self.limits, level)
        pending = _Pending(name, count, payload)
        with self._queued:
            if self._closing:
                raise SluiceError("the ingestion log is closed", code=codes.UNAVAILABLE)
            self._queue.append(pending)
            self._queued.notify()
        pending.done.wait()
        if pending.error is not None:
            raise pending.error
        return pending.receipt

    def _write_loop(self) -> None:
        while True:
            with self._queued:
                while not self._queue and not self._closing:
                    self._queued.wait()
                batch, self._queue = self._queue, []
                if not batch and self._closing:
                    return
            self._commit(batch)

    def _commit(self, batch: list[_Pending]) -> None:
        with self._lock:
            touched: dict[str, SegmentLog] = {}
            for item in batch:
                log = self._logs.get(item.stream)
                if log is None:
                    item.error = NotFound(
                        details={"stream": item.stream}, what="input stream", name=item.stream
                    )
                    continue
                first = log.head.seq
                log.append(item.count, item.payload)
                item.receipt = AppendReceipt(item.stream, first, item.count)
                touched[item.stream] = log
            try:
                for log in touched.values():
                    log.sync()
            except OSError as exc:
                failure = SluiceError(code=codes.LOG_WRITE_FAILED, reason=exc)
                for item in batch:
                    item.error, item.receipt = item.error or failure, None
            else:
                acked = time.monotonic()
                for name, log in touched.items():
                    self._heads[name] = log.head
                    self._acks[name].record(log.head.seq, acked)
            self.commits += 1
        with self._changed:
            self._changed.notify_all()
        for item in batch:
            item.done.set()

    # -- reading heads and compaction ------------------------------------------------------
    def heads(self, names: list[str]) -> dict[str, Position]:
        """The durable end of each named stream's log."""
        with self._lock:
            for name in names:
                self._require(name)
            return {name: self._heads[name] for name in names}

    def acked_at(self, name: str, seq: int) -> float | None:
        """The ``time.monotonic()`` at which the append ending at row ``seq`` of ``name`` was
        acknowledged; None unless it was recent and made by this process."""
        with self._lock:
            acks = self._acks.get(name)
            return acks.at(seq) if acks is not None else None

    def wait_for_change(self, known: Mapping[str, int], timeout: float) -> dict[str, Position]:
        """Return the heads as soon as one stream is past ``known[stream]``, or after
        ``timeout``."""
        with self._changed:
            self._changed.wait_for(
                lambda: any(h.seq > known[n] for n, h in self.heads(list(known)).items()), timeout
            )
        return self.heads(list(known))

    def truncate(self, name: str, before_seq: int) -> int:
        """Drop whole segments holding only rows before ``before_seq``; return how many."""
        with self._lock:
            self._require(name)
            return self._logs[name].truncate_before(before_seq)

    def directory(self, name: str) -> Path:
        return self.root / name

    def close(self) -> None:
        with self._queued:
            self._closing = True
            self._queued.notify()
        self._writer.join()
        with self._lock:
            for log in self._logs.values():
                log.close()
