"""One output of a deployed diagram: its durable result log, last-N cache and taps.

Spark re-runs a micro-batch that was not committed before a crash. The result log makes
delivery exactly-once across crashes: every non-empty batch is written (with its batch id)
and flushed *before* anyone sees it, and a batch whose id is already in the log is skipped.
A tap (the server has one per output: the delivery path, where each socket's subscription is
kept) gets a bounded queue fed to its callback by a shared pool (``taps.py``), so a slow one
loses batches (counted in ``stats``) instead of stalling the query; each sees batches in order.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pyarrow as pa

from boxes import codes
from boxes.arrowipc import ipc_bytes
from boxes.errors import Conflict, Gone
from server.ingest.segments import Position
from server.runtime.handover import to_arrow
from server.runtime.resultlog import identity, open_log, read_range, tail
from server.runtime.storage import Location
from server.runtime.taps import Callback, DeliveryPool, Tap

log = logging.getLogger(__name__)
BATCH_KEY = b"sluice.batch_id"
NEXT_KEY = b"sluice.next"  # on a table handed to taps: the position after its last row
LOG_KEY = b"sluice.log"  # and the identity of the result log that position is in
READ_KEY = b"sluice.read"  # a real-time output's group: how far it read its streams (realtime.py)
Acked = Callable[[int], float | None]  # batch id -> when its newest input was acknowledged
Advanced = Callable[[Location, Position], None]  # the result log (its place) ends at a position
Claimed = Callable[[], int | None]  # the first row a derived input reading it still needs
Relabel = Callable[[pa.Table], pa.Table]  # a batch with its ON RESULT policy
Relabeller = Callable[[str, pa.Table], pa.Table]  # the same, for any output of a diagram


def _position(batch_id: int, after: int, log_id: str) -> dict[bytes, bytes]:
    """A batch's place in its output's result log, as taps receive it: its id, the position
    after its last row, and the log's identity."""
    return {
        BATCH_KEY: str(batch_id).encode(),
        NEXT_KEY: str(after).encode(),
        LOG_KEY: log_id.encode(),
    }


def encode_batch(table: pa.Table, batch_id: int, read: bytes | None = None) -> bytes:
    metadata = {BATCH_KEY: str(batch_id).encode()} | ({READ_KEY: read} if read else {})
    return ipc_bytes(table.replace_schema_metadata(metadata))


def decode_batch(payload: bytes) -> tuple[int, pa.Table]:
    table = pa.ipc.open_stream(payload).read_all()
    batch_id = int(table.schema.metadata[BATCH_KEY])
    return batch_id, table.replace_schema_metadata(None)


@dataclass(frozen=True)
class Results:
    """A read of an output's result log: tables in order, the position read from, the
    position to read next, the oldest position still kept, and the log's identity."""

    tables: list[pa.Table]
    start: int
    next: int
    oldest: int
    log: str


@dataclass(frozen=True)
class Asked:
    """Who reads an output's result log: the output's name as the reader knows it, which
    refusals show (not the runtime's), and the log its position is of (None: whichever is
    current, as before logs had identities)."""

    output: str
    log: str | None = None

    def check(self, log_id: str) -> None:
        """``RESULTS_RESTARTED`` if the position is of another log than ``log_id`` (named in
        its details too, for a client to read it from 0 with)."""
        if self.log is not None and self.log != log_id:
            raise Conflict(
                code=codes.RESULTS_RESTARTED,
                details={"log": log_id},  # what to read from 0 with
                output=self.output,
                asked=self.log,
                log=log_id,
            )


def run_replayed(frame) -> None:
    """Run a batch Spark replays whose results are logged already, keeping none of its rows.

    After a crash between logging a batch's results and Spark recording its commit, Spark runs
    the batch again. Its results must not be delivered twice, but its windows, aggregates and
    joins must still run: Spark commits a batch's state only when the batch is executed, and
    refuses a batch whose state was not (``STATE_STORE_COMMIT_VALIDATION_FAILED``), which
    failed the query and cost a restart. The ``noop`` sink executes every partition and
    discards what comes out."""
    frame.write.format("noop").mode("overwrite").save()


class OutputSink:
    """Receives one output's micro-batches (``handle`` is the ``foreachBatch`` function)."""

    def __init__(
        self,
        name: str,
        directory: str | os.PathLike,
        recent_rows: int,
        retain_rows: int,
        tasks: int = 2,
        segment_bytes: int = 4 << 20,
        acked: Acked = lambda batch_id: None,
        advanced: Advanced = lambda directory, head: None,
        claimed: Claimed = lambda: None,
        relabel: Relabel | None = None,
    ) -> None:
        """``directory`` is where the result log lives (a local path or a URL: ``resultlog.py``);
        ``relabel`` gives each batch its policy before it is logged (an output with ``ON
        RESULT``: ``boxes/punctuations/results.py``)."""
        self.name = name
        self.relabel = relabel
        self.acked = acked
        self.advanced = advanced
        self.claimed = claimed
        self.tasks = tasks
        self.recent_rows = recent_rows
        self.retain_rows = max(retain_rows, recent_rows)
        self._results = open_log(directory, segment_bytes)
        self.log_id = identity(directory)
        self._recent: deque[pa.Table] = deque()
        self._recent_count = 0
        self._recent_next = 0  # the position after the last recent row
        self._lock = threading.Lock()
        self._taps: list[Tap] = []
        self.last_batch_id = -1
        self.batches = 0
        self.rows = 0
        self.latency_ms: float | None = None  # of the last batch delivered, when known
        self._reload()
        advanced(self._results.location, self._results.head)

    def _reload(self) -> None:
        """Recover the last delivered batch id and the recent rows from the log's tail."""
        head = self._results.head
        for frame in tail(self._results.location, head, max(self.recent_rows, 1)):
            batch_id, table = decode_batch(frame.payload)
            self.last_batch_id = batch_id
            self._remember(table)
        self._recent_next = head.seq

    def _remember(self, table: pa.Table) -> None:
        self._recent.append(table)
        self._recent_count += table.num_rows
        while self._recent and self._recent_count - self._recent[0].num_rows >= self.recent_rows:
            self._recent_count -= self._recent.popleft().num_rows

    def handle(self, frame, batch_id: int) -> None:
        """Log, then deliver, one micro-batch; a batch already logged is not delivered again."""
        if batch_id <= self.last_batch_id:
            run_replayed(frame)
            return
        # A union of many inputs has a partition per input: a few tasks read them all.
        self.take(to_arrow(frame, self.tasks), batch_id)  # the batch's one action

    @property
    def location(self) -> Location:
        return self._results.location

    @property
    def head(self) -> Position:
        return self._results.head

    def take(self, table: pa.Table, batch_id: int, read: bytes | None = None) -> None:
        """Log, then deliver, one micro-batch's rows, already brought back (``handle``, or a
        prefix host's split of its batch: ``overlap.py``), or a real-time output's group of
        rows with how far it has ``read`` (``realtime.py``)."""
        if batch_id <= self.last_batch_id or table.num_rows == 0:
            return
        if self.relabel is not None:
            table = self.relabel(table)
        self._results.append(table.num_rows, encode_batch(table, batch_id, read))  # durably
        self.advanced(self._results.location, self._results.head)
        self._results.truncate_before(self._retained_from())
        try:
            acked = self.acked(batch_id)
        except Exception:  # measuring the latency must never cost a delivery
            log.exception("output %s: batch %d's latency is unknown", self.name, batch_id)
            acked = None
        handed = time.monotonic()
        with self._lock:
            self.latency_ms = None if acked is None else round((handed - acked) * 1000, 1)
            self.last_batch_id = batch_id
            self.batches += 1
            self.rows += table.num_rows
            self._remember(table)
            self._recent_next = self._results.head.seq
            taps = list(self._taps)
        positioned = table.replace_schema_metadata(
            _position(batch_id, self._results.head.seq, self.log_id)
        )
        for tap in taps:
            tap.offer(positioned)

    def _retained_from(self) -> int:
        """The first row to keep: the last ``retain_rows``, and whatever a derived input
        (another diagram reading this output) has not yet consumed. Only once a tenth of
        ``retain_rows`` more can go: an object log has a unit per batch, and each look at
        the readers' checkpoints reads every deployed diagram's."""
        cut = self._results.head.seq - self.retain_rows
        bases = self._results.bases()
        if len(bases) < 2 or bases[1] > cut or cut - bases[0] < self.retain_rows // 10:
            return bases[0] if bases else 0  # keep all: spare the readers' checkpoints a look
        claimed = self.claimed()
        return cut if claimed is None else min(cut, claimed)

    def end(self) -> int:
        """The position after the last row logged: a batch boundary."""
        return self._results.head.seq

    def read_from(self, start: int, max_rows: int, asked: Asked | None = None) -> Results:
        """Up to about ``max_rows`` results from row position ``start`` on (whole batches, the
        first one cut at ``start``), as the durable log holds them; ``RESULTS_RESTARTED`` if
        ``start`` is of another log than the one ``asked`` names, ``RESULTS_EXPIRED`` if
        retention has dropped rows at or after ``start``."""
        asked = asked or Asked(self.name)
        asked.check(self.log_id)
        with self._lock:  # taken by ``handle`` after a batch is written and synced
            head = self._results.head
            bases = self._results.bases()
        oldest = bases[0] if bases else head.seq
        tables: list[pa.Table] = []
        end = start
        for _, table, end in self._batches(start, head, bases, asked.output):
            tables.append(table)
            if end >= head.seq or sum(t.num_rows for t in tables) >= max_rows:
                break
        return Results(tables, start=start, next=end, oldest=oldest, log=self.log_id)

    def logged(self, start: int, end: int) -> list[pa.Table]:
        """The batches logged from position ``start`` to ``end`` (a batch boundary), each cut
        at ``start`` and positioned as ``handle`` hands batches to taps: what a shared
        execution hands a member that comes back (``sharing.py``). Those still kept, if
        retention dropped some (a member stopped for longer than ``retain_rows`` of results:
        its readers find those positions expired, as any output's past its retention)."""
        with self._lock:
            head = self._results.head
            bases = self._results.bases()
        if bases and start < bases[0]:
            log.warning("output %s: rows %d to %d are no longer kept", self.name, start, bases[0])
            start = bases[0]
        found = []
        for batch_id, table, after in self._batches(start, head, bases, self.name):
            if after > end:
                break
            found.append(table.replace_schema_metadata(_position(batch_id, after, self.log_id)))
        return found

    def _batches(
        self, start: int, head: Position, bases: list[int], output: str
    ) -> Iterator[tuple[int, pa.Table, int]]:
        """Each logged batch that ends after ``start``, up to ``head``: its id, its rows from
        ``start`` on, and the position after it; ``RESULTS_EXPIRED`` if retention dropped
        rows at or after ``start``, ``RESULTS_BEYOND_END`` if ``start`` is past the newest
        position (a read from there would wait for nothing it could tell apart), each naming
        ``output``."""
        oldest = bases[0] if bases else head.seq
        if start < oldest:
            raise Gone(code=codes.RESULTS_EXPIRED, output=output, oldest=oldest)
        if start > head.seq:
            raise Conflict(
                code=codes.RESULTS_BEYOND_END, output=output, start=start, newest=head.seq
            )
        base = max((b for b in bases if b <= start), default=oldest)
        try:
            for frame in read_range(self._results.location, Position(base, base, 0), head):
                if frame.first_seq + frame.count <= start:
                    continue
                batch_id, table = decode_batch(frame.payload)
                yield (
                    batch_id,
                    table.slice(max(0, start - frame.first_seq)),
                    frame.first_seq + frame.count,
                )
        except FileNotFoundError:  # retention dropped the segment while it was read
            oldest = self._results.bases()[0]
            raise Gone(code=codes.RESULTS_EXPIRED, output=output, oldest=oldest) from None

    def tap(self, callback: Callback, pool: DeliveryPool, max_pending: int = 64) -> Tap:
        """Feed every batch delivered from now on to ``callback``, from ``pool``'s threads."""
        tap = Tap(self.name, callback, max_pending, pool)
        with self._lock:
            self._taps.append(tap)
        return tap

    def untap(self, tap: Tap) -> None:
        with self._lock:
            self._taps.remove(tap)
        tap.close()

    def recent(self, n: int | None = None, since: int = 0) -> pa.Table | None:
        """The last ``n`` (default: all kept) result tuples, oldest first, of those at
        position ``since`` or after (a member of a shared output: ``sharing.py``); None
        before any."""
        with self._lock:
            tables, end = list(self._recent), self._recent_next
        if not tables:
            return None
        table = pa.concat_tables(tables)
        n = self.recent_rows if n is None else min(n, self.recent_rows)
        first = end - table.num_rows
        return table.slice(max(0, table.num_rows - n, since - first))

    def stats(self) -> dict:
        with self._lock:
            head = self._results.head.seq
            bases = self._results.bases()
            taps = [t.stats() for t in self._taps]
        # "subscribers" is the status API's name for the taps (the server's one is delivery)
        return {
            "batches": self.batches,
            "rows": self.rows,
            "last_batch_id": self.last_batch_id,
            "latency_ms": self.latency_ms,
            "subscribers": taps,
            "dropped_batches": sum(t["dropped_batches"] for t in taps),
            "dropped_rows": sum(t["dropped_rows"] for t in taps),
            # positions a subscriber may resume from: [oldest_position, next_position]
            "oldest_position": bases[0] if bases else head,
            "next_position": head,
            "retained_rows": self.retain_rows,
        }

    def close(self) -> None:
        with self._lock:
            taps, self._taps = self._taps, []
        for tap in taps:
            tap.close()
        self._results.close()
