"""The durable ingestion log: one segment log per input stream, written with group commit.

``append`` checks and encodes a batch in the caller's thread, then hands it to one writer
thread. The writer takes every batch waiting, writes each as a frame, flushes every touched
file once (``fdatasync``) and only then acknowledges them all and publishes the new heads:
many small concurrent appends share one disk flush, and a published head never points past
durable data. Readers (the Spark source) learn heads through ``heads``, waiting on ``changed``.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa

from boxes import codes
from boxes.errors import Conflict, InvalidInput, NotFound, SluiceError
from boxes.punctuations import Sp, Stamp
from boxes.punctuations.model import NO_SPS, NO_STAMPS, SpsAt, Stamps
from boxes.punctuations.shield import EMPTY
from boxes.types import Schema, parse_schema
from catalog.clearance import PUBLIC_ONLY, Admission
from server.ingest.acks import AckTimes
from server.ingest.durable import make_dirs_durably, write_durably
from server.ingest.encode import Limits, encode, encode_table, to_payload
from server.ingest.items import Part
from server.ingest.punctuated import (
    Governance,
    StreamShield,
    is_snapshot,
    replay,
    snapshot_payload,
    sps_payload,
)
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
    """One frame for the writer: its bytes, or (a governed stream's tuples) the table the
    writer labels first, or (``sps``) a control frame of security punctuations."""

    __slots__ = (
        "stream",
        "count",
        "payload",
        "table",
        "stamps",
        "governance",
        "sps",
        "sps_at",
        "done",
        "receipt",
        "error",
    )

    def __init__(
        self,
        stream: str,
        count: int,
        payload: bytes = b"",
        table: pa.Table | None = None,
        stamps: Stamps = NO_STAMPS,
        governance: Governance | None = None,
        sps: Sequence[Sp] | None = None,
        sps_at: SpsAt = NO_SPS,
    ) -> None:
        self.stream, self.count, self.payload = stream, count, payload
        self.table, self.stamps, self.governance, self.sps = table, stamps, governance, sps
        self.sps_at = sps_at  # sps among a governed batch's rows (``punctuated.with_sps``)
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
        self._shields: dict[str, StreamShield] = {}  # security punctuations, per stream
        self._lock = threading.Lock()  # guards the dicts above and the segment logs
        # Notified whenever heads move (the result logs' too: the head service's long polls
        # wait on both, ``server/runtime/heads.py``).
        self.changed = threading.Condition()
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
        self._shields[name] = _rebuilt(name, log)

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
            del self._schemas[name], self._heads[name], self._acks[name], self._shields[name]
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
    def append(
        self,
        name: str,
        tuples: list[Mapping[str, Any]],
        level: Admission = PUBLIC_ONLY,
        governance: Governance | None = None,
        stamps: Sequence[Stamp | None] | None = None,
    ) -> AppendReceipt:
        """Check, encode and durably append a batch; return once it is on disk. Each tuple's
        Chinese-Wall level label, which ``level`` (the admission's) decides, is written with
        it. With
        ``governance`` (the stream is governed by sps), each tuple's ``stamps`` (None: it
        names no policy) and the policy label the shield gives it are written too."""
        schema = self.schema(name)
        now = datetime.now(timezone.utc)
        if governance is None:
            count, payload = encode(name, schema, tuples, now, self.limits, level)
            return self._enqueue(_Pending(name, count, payload))
        table = encode_table(name, schema, tuples, now, self.limits, level)
        given = Stamps.of([None] * table.num_rows if stamps is None else stamps)
        if len(given) != table.num_rows:
            raise ValueError(f"{len(given)} stamps for {table.num_rows} tuples")
        return self._enqueue(_Pending(name, table.num_rows, b"", table, given, governance))

    def append_sps(self, name: str, sps: Sequence[Sp]) -> AppendReceipt:
        """Durably log security punctuations into ``name``'s log, in order with its tuples
        (one control frame: a crash keeps all of them or none); count 0."""
        self.schema(name)
        if not sps:
            raise InvalidInput(f"stream {name!r}: no sps", code=codes.BATCH_INVALID)
        return self._enqueue(_Pending(name, 0, sps_payload(sps), sps=tuple(sps)))

    def append_parts(
        self, name: str, parts: Sequence[Part], level: Admission, governance: Governance
    ) -> AppendReceipt:
        """A governed stream's batch of sps and tuples (``items.split``), checked whole first,
        then written as one frame (``punctuated.py``): its tuples, with the sps among them;
        a batch of sps alone is one control frame. The receipt counts its tuples."""
        tuples = [t for part in parts for t in part.tuples]
        if not tuples:
            return self.append_sps(name, [sp for part in parts for sp in part.sps])
        schema = self.schema(name)
        table = encode_table(name, schema, tuples, datetime.now(timezone.utc), self.limits, level)
        stamps = Stamps.of(s for part in parts for s in part.stamps)
        runs, row = [], 0
        for part in parts:
            if part.sps:
                runs.append((row, part.sps))
            row += len(part.tuples)
        sps_at = SpsAt.of(runs)
        pending = _Pending(name, len(tuples), b"", table, stamps, governance, sps_at=sps_at)
        return self._enqueue(pending)

    def _enqueue(self, pending: _Pending) -> AppendReceipt:
        (receipt,) = self._enqueue_all([pending])
        return receipt

    def _enqueue_all(self, pending: list[_Pending]) -> list[AppendReceipt]:
        """Hand frames to the writer together (it takes every waiting one, in order, into one
        group commit) and wait for them; the first refusal is raised."""
        with self._queued:
            if self._closing:
                raise SluiceError("the ingestion log is closed", code=codes.UNAVAILABLE)
            self._queue.extend(pending)
            self._queued.notify()
        for item in pending:
            item.done.wait()
        for item in pending:
            if item.error is not None:
                raise item.error
        return [item.receipt for item in pending if item.receipt is not None]

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
                try:
                    self._write(item, log)
                except SluiceError as refused:
                    item.error = refused
                    continue
                touched[item.stream] = log
            try:
                for log in touched.values():
                    log.sync()
            except OSError as exc:
                failure = SluiceError(code=codes.LOG_WRITE_FAILED, reason=exc)
                for item in batch:
                    item.error, item.receipt = item.error or failure, None
                for name, log in touched.items():  # what the file holds decides, as on open
                    self._shields[name] = _rebuilt(name, log)
            else:
                acked = time.monotonic()
                for name, log in touched.items():
                    self._heads[name] = log.head
                    self._acks[name].record(log.head.seq, acked)
            self.commits += 1
        with self.changed:
            self.changed.notify_all()
        for item in batch:
            item.done.set()

    def _write(self, item: _Pending, log: SegmentLog) -> None:
        """Write one frame (a governed batch labelled by its stream's shield first); the
        shield's state moves with it. A new segment starts with a snapshot of the state."""
        shield = self._shields[item.stream]
        state, payload = shield.state, item.payload
        if item.sps is not None:
            state = shield.admit_sps(item.sps)
        elif item.table is not None and item.governance is not None:
            table, state = shield.label(item.table, item.stamps, item.governance, item.sps_at)
            payload = to_payload(item.stream, table, self.limits)
        if log.rolls and shield.state != EMPTY:
            log.append(0, snapshot_payload(shield.state))
        first = log.head.seq
        log.append(item.count, payload)
        shield.state = state
        item.receipt = AppendReceipt(item.stream, first, item.count)

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


def _rebuilt(name: str, log: SegmentLog) -> StreamShield:
    """The shield of a stream as its log leaves it (``punctuated.replay``)."""
    frames = log.frames_from_snapshot(is_snapshot)
    return StreamShield(name, replay(name, ((f.count, f.payload) for f in frames)))
