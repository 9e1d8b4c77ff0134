"""Taps: each reader of an output gets its batches in order, from a few threads shared by all.

A tap (``OutputSink.tap``; a member of a shared execution has one per output, ``runner._attach``)
holds up to ``max_pending`` batches; one offered when it is full is dropped for that tap and
counted, so a slow reader loses its own batches instead of stalling the Spark query, which only
appends to the tap's queue. A thread per tap cost about 40 KiB each, which the 100 members of
one shared execution multiplied (docs/benchmarks.md, "Scale"); so taps with batches pending
wait in one line for a ``DeliveryPool``'s few workers (``delivery_threads``). A worker takes
the first tap in line, hands its callback one batch and puts it back at the end of the line if
it has more: no tap is delivered to by two threads at once, each gets its batches in the order
offered, and a busy tap takes turns with the others.

The trade-off: a callback that blocks holds its worker. While fewer callbacks block than there
are workers, the others are delivered to by the workers left; once as many block, delivery to
every tap of the runtime stops until one returns, and their batches are dropped, counted, as
for any slow reader (the queries still never wait). The server's callback
(``realtime.delivery``) is the SecFilter and socket.io emits, which Engine.IO queues per
connection; it waits only on the catalog's database and the results relay (a 2 s timeout).

``close`` delivers what is queued on the calling thread when no worker holds the tap (so it
never waits for a free worker, even when called from another tap's callback), else first waits
for that worker's batch; called from the tap's own callback, it returns at once and the worker
delivers the rest.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable

import pyarrow as pa

log = logging.getLogger(__name__)
Callback = Callable[[str, pa.Table], None]


class DeliveryPool:
    """Up to ``threads`` daemon workers, started as work needs them, for any number of taps."""

    def __init__(self, threads: int) -> None:
        self.threads = threads
        self._lock = threading.Lock()  # guards the line and every tap's queue and holder
        self._ready = threading.Condition(self._lock)  # a tap joined the line, or closing
        self._released = threading.Condition(self._lock)  # a holder let go of a tap
        self._line: deque[Tap] = deque()
        self._workers = 0
        self._waiting = 0  # workers waiting for the line and not yet woken
        self._closed = False

    def _enqueue(self, tap: Tap) -> None:
        """Put ``tap`` in line and make sure a worker comes for it (the lock held)."""
        tap._in_line = True
        self._line.append(tap)
        if self._waiting:
            self._waiting -= 1  # counted off here, so the next tap wakes another worker
            self._ready.notify()
        elif self._workers < self.threads and not self._closed:
            self._start_worker()

    def _start_worker(self) -> None:
        self._workers += 1
        name = f"deliver-{self._workers}"
        threading.Thread(target=self._work, name=name, daemon=True).start()

    def _work(self) -> None:
        me = threading.current_thread()
        with self._lock:
            try:
                while True:
                    while not self._line and not self._closed:
                        self._waiting += 1
                        self._ready.wait()
                    if self._closed:
                        return
                    tap = self._line.popleft()
                    tap._in_line, tap._holder = False, me
                    try:
                        tap._deliver_one()
                    finally:  # also when a callback raised past ``Exception`` (SystemExit)
                        tap._holder = None
                        if tap._pending:  # to the end of the line, which this worker serves next
                            tap._in_line = True
                            self._line.append(tap)
                        self._released.notify_all()
            finally:  # closed, or a callback ended this thread: then another takes its place
                self._workers -= 1
                if self._line and not self._closed:
                    self._start_worker()

    def close(self) -> None:
        """Let the workers end once their current batch is delivered; close the taps first to
        have theirs delivered (a worker blocked in a callback is not waited for)."""
        with self._lock:
            self._closed = True
            self._ready.notify_all()


class Tap:
    """A reader of one output: its pending batches and the callback a pool feeds them to."""

    def __init__(
        self, output: str, callback: Callback, max_pending: int, pool: DeliveryPool
    ) -> None:
        self.output = output
        self.callback = callback
        self.max_pending = max_pending
        self.dropped_batches = 0
        self.dropped_rows = 0
        self.failures = 0
        self._pool = pool
        self._pending: deque[pa.Table] = deque()
        self._holder: threading.Thread | None = None  # the thread delivering to it, if any
        self._in_line = False
        self._closed = False

    def offer(self, table: pa.Table) -> None:
        """Queue a batch, or drop and count it if the tap is full (or closed); never waits."""
        with self._pool._lock:
            if self._closed or len(self._pending) >= self.max_pending:
                self.dropped_batches += 1
                self.dropped_rows += table.num_rows
                return
            self._pending.append(table)
            if self._holder is None and not self._in_line:
                self._pool._enqueue(self)

    def _deliver_one(self) -> None:
        """Hand the oldest pending batch to the callback, the pool's lock released meanwhile
        (called with it held, by the tap's holder)."""
        table = self._pending.popleft()
        self._pool._lock.release()
        try:
            self.callback(self.output, table)
        except Exception:  # a consumer's bug must not stop delivery to it or the others
            self.failures += 1
            log.exception("output %s: a tap's callback failed", self.output)
        finally:
            self._pool._lock.acquire()

    def close(self) -> None:
        """Take no more batches; deliver those queued, then return (see the module's doc)."""
        pool, me = self._pool, threading.current_thread()
        with pool._lock:
            self._closed = True
            while self._holder is not None:
                if self._holder is me:  # from its own callback: the holder delivers the rest
                    return
                pool._released.wait()
            if self._in_line:
                pool._line.remove(self)
                self._in_line = False
            self._holder = me
            while self._pending:
                self._deliver_one()
            self._holder = None
            pool._released.notify_all()

    def stats(self) -> dict[str, int]:
        return {
            "pending": len(self._pending),
            "dropped_batches": self.dropped_batches,
            "dropped_rows": self.dropped_rows,
            "callback_failures": self.failures,
        }
