"""Output sinks fed real Spark DataFrames: exactly-once by batch id, last-N, slow consumers;
each with its result log in a local directory and on S3 (``results_place``). Then their taps
on their own: order, drops, failures and closing, on a pool of a few threads (``taps.py``)."""

from __future__ import annotations

import threading
import time

import pyarrow as pa
import pytest
from runtime_helpers import WAIT, Collector, read_results

from boxes.errors import Gone
from server.runtime.outputs import BATCH_KEY, NEXT_KEY, OutputSink
from server.runtime.taps import DeliveryPool, Tap


@pytest.fixture
def pool():
    made = DeliveryPool(4)
    yield made
    made.close()


@pytest.fixture
def frames(spark):
    def make(*values: int):
        return spark.createDataFrame([(v,) for v in values], "v BIGINT")

    return make


def test_a_batch_already_logged_is_not_delivered_again_after_reopening(results_place, frames, pool):
    seen = Collector()
    sink = OutputSink("o", results_place, recent_rows=10, retain_rows=100)
    sink.tap(seen, pool)
    sink.handle(frames(1, 2), 0)
    sink.handle(frames(3), 1)
    sink.close()
    reopened = OutputSink("o", results_place, recent_rows=10, retain_rows=100)
    reopened.tap(seen, pool)
    reopened.handle(frames(3), 1)  # Spark re-runs the uncommitted batch after a crash
    reopened.handle(frames(4), 2)
    reopened.close()
    assert [r["v"] for r in seen.rows] == [1, 2, 3, 4]
    assert [batch_id for batch_id, _ in read_results(results_place)] == [0, 1, 2]


def test_recent_keeps_the_last_rows_across_reopening(results_place, frames):
    sink = OutputSink("o", results_place, recent_rows=5, retain_rows=5)
    for batch_id in range(4):
        sink.handle(frames(*range(batch_id * 3, batch_id * 3 + 3)), batch_id)
    assert sink.recent().column("v").to_pylist() == [7, 8, 9, 10, 11]
    assert sink.recent(2).column("v").to_pylist() == [10, 11]
    sink.close()
    reopened = OutputSink("o", results_place, recent_rows=5, retain_rows=5)
    assert reopened.recent().column("v").to_pylist() == [7, 8, 9, 10, 11]
    reopened.close()


def test_a_slow_tap_loses_batches_counted_while_others_get_all_in_order(
    results_place, frames, pool
):
    entered, release = threading.Event(), threading.Event()
    slow_rows = []

    def slow(output, table):
        slow_rows.extend(table.column("v").to_pylist())
        entered.set()
        release.wait()

    fast = Collector()
    sink = OutputSink("o", results_place, recent_rows=10, retain_rows=100)
    slow_tap = sink.tap(slow, pool, max_pending=2)
    sink.tap(fast, pool)
    sink.handle(frames(0), 0)
    assert entered.wait(60)
    for batch_id in range(1, 6):
        sink.handle(frames(batch_id), batch_id)  # returns at once: nothing waits for `slow`
    stats = sink.stats()
    assert (stats["dropped_batches"], stats["dropped_rows"]) == (3, 3)
    release.set()
    assert [r["v"] for r in fast.wait_for_rows(6)] == [0, 1, 2, 3, 4, 5]
    sink.untap(slow_tap)
    assert slow_rows == [0, 1, 2]
    sink.close()


def test_latency_runs_to_the_handoff_and_failing_to_measure_it_costs_no_delivery(
    results_place, frames, pool
):
    acked = {0: time.monotonic() - 0.5}
    seen = Collector()
    sink = OutputSink("o", results_place, recent_rows=10, retain_rows=100, acked=acked.__getitem__)
    sink.tap(seen, pool)
    assert sink.stats()["latency_ms"] is None
    sink.handle(frames(1), 0)
    assert sink.stats()["latency_ms"] >= 500
    sink.handle(frames(2), 1)  # no acknowledgement time known: the lookup raises
    assert [r["v"] for r in seen.wait_for_rows(2)] == [1, 2]
    assert sink.stats()["latency_ms"] is None
    sink.close()


@pytest.mark.parametrize("claim, first_kept", [(None, 7), (2, 2)])
def test_a_derived_readers_claim_holds_back_retention(results_place, frames, claim, first_kept):
    """Retention keeps ``retain_rows``, and also every row a diagram reading this output (a
    derived input) has not yet consumed; heads are reported after each durable write."""
    heads = []
    sink = OutputSink(
        "o",
        results_place,
        recent_rows=1,
        retain_rows=1,
        segment_bytes=1,  # a segment per batch, so whole segments can go
        advanced=lambda directory, head: heads.append(head.seq),
        claimed=lambda: claim,
    )
    for batch_id in range(8):
        sink.handle(frames(batch_id), batch_id)
    sink.close()
    assert heads == list(range(9))  # at opening, then after each batch
    kept = [t["v"].to_pylist()[0] for _, t in read_results(results_place)]
    assert kept[0] == first_kept and kept[-1] == 7


def test_the_readers_claims_are_asked_only_once_a_tenth_of_the_retained_rows_can_go(
    results_place, frames
):
    """With a unit per batch (as an object log always has) every batch would otherwise make
    retention read every deployed diagram's checkpoints."""
    asked = []
    sink = OutputSink(
        "o",
        results_place,
        recent_rows=1,
        retain_rows=20,
        segment_bytes=1,
        claimed=lambda: asked.append(True),  # None: no diagram reads this output
    )
    for batch_id in range(40):
        sink.handle(frames(batch_id), batch_id)
    sink.close()
    assert 20 <= len(read_results(results_place)) <= 22
    assert 5 <= len(asked) <= 10  # not once per batch past the first 20


def test_logged_batches_come_positioned_and_a_returning_member_gets_those_still_kept(
    results_place, frames
):
    """``logged`` is what a shared execution hands a member that comes back (``sharing.py``):
    each batch with its id and the position after it; past retention, the kept ones only."""
    sink = OutputSink("o", results_place, recent_rows=1, retain_rows=1, segment_bytes=1)
    for batch_id in range(8):
        sink.handle(frames(batch_id), batch_id)
    kept = sink.logged(0, sink.end())
    assert kept and int(kept[-1].schema.metadata[NEXT_KEY]) == sink.end() == 8
    assert [t["v"].to_pylist() for t in kept] == [[v] for v in range(8 - len(kept), 8)]
    assert [int(t.schema.metadata[BATCH_KEY]) for t in kept] == list(range(8 - len(kept), 8))
    assert sink.logged(7, 8)[0]["v"].to_pylist() == [7]
    assert len(kept) < 8
    with pytest.raises(Gone):  # what a reader of the dropped positions is told
        sink.read_from(0, 100)
    sink.close()


def batch(*values: int) -> pa.Table:
    return pa.table({"v": pa.array(values, pa.int64())})


class Recorder:
    """A tap's callback that keeps the values it is handed and counts overlapping calls."""

    def __init__(self, gate: threading.Event | None = None) -> None:
        self.values: list[int] = []
        self.overlaps = 0
        self.gate = gate  # each call waits for it, if any
        self.entered = threading.Event()
        self._busy = threading.Lock()  # held through each call
        self._changed = threading.Condition()

    def __call__(self, output: str, table: pa.Table) -> None:
        if not self._busy.acquire(blocking=False):
            self.overlaps += 1  # another thread is in a call for this tap
            self._busy.acquire()
        try:
            self.entered.set()
            if self.gate is not None:
                assert self.gate.wait(WAIT)
            with self._changed:
                self.values.extend(table.column("v").to_pylist())
                self._changed.notify_all()
        finally:
            self._busy.release()

    def wait_for(self, count: int) -> list[int]:
        with self._changed:
            assert self._changed.wait_for(lambda: len(self.values) >= count, WAIT)
            return list(self.values)


def test_many_taps_each_get_their_batches_in_order_one_at_a_time(pool):
    recorders = [Recorder() for _ in range(40)]
    taps = [Tap("o", r, 1000, pool) for r in recorders]

    def offer_all(mine: list[Tap]) -> None:  # offered by four threads at once, like queries
        for v in range(200):
            for tap in mine:
                tap.offer(batch(v))

    offerers = [threading.Thread(target=offer_all, args=(taps[i::4],)) for i in range(4)]
    for thread in offerers:
        thread.start()
    for thread in offerers:
        thread.join()
    for recorder, tap in zip(recorders, taps, strict=True):
        assert recorder.wait_for(200) == list(range(200))
        assert recorder.overlaps == 0
        assert tap.stats()["dropped_batches"] == 0


def test_a_blocked_callback_holds_up_only_its_own_tap(pool):
    release = threading.Event()
    stuck, others = Recorder(gate=release), [Recorder() for _ in range(10)]
    stuck_tap = Tap("o", stuck, 4, pool)
    stuck_tap.offer(batch(0))
    assert stuck.entered.wait(WAIT)
    taps = [Tap("o", r, 64, pool) for r in others]
    for v in range(20):
        for tap in taps:
            tap.offer(batch(v))
    for recorder in others:
        assert recorder.wait_for(20) == list(range(20))  # while `stuck` still waits
    assert stuck.values == []
    release.set()
    stuck_tap.close()
    assert stuck.values == [0]


def test_a_full_tap_drops_and_counts_what_it_is_offered(pool):
    release = threading.Event()
    slow = Recorder(gate=release)
    tap = Tap("o", slow, 2, pool)
    tap.offer(batch(0))
    assert slow.entered.wait(WAIT)  # taken: the tap holds two more
    for v in range(1, 6):
        tap.offer(batch(v, v))
    assert tap.stats() == {
        "pending": 2,
        "dropped_batches": 3,
        "dropped_rows": 6,
        "callback_failures": 0,
    }
    release.set()
    tap.close()
    assert slow.values == [0, 1, 1, 2, 2]


def test_a_failing_callback_is_counted_and_delivery_goes_on(pool):
    seen, other = Recorder(), Recorder()

    def flaky(output: str, table: pa.Table) -> None:
        if table.column("v")[0].as_py() == 1:
            raise ValueError("a consumer's bug")
        seen(output, table)

    tap, other_tap = Tap("o", flaky, 64, pool), Tap("o", other, 64, pool)
    for v in range(4):
        tap.offer(batch(v))
        other_tap.offer(batch(v))
    assert seen.wait_for(3) == [0, 2, 3]
    assert other.wait_for(4) == [0, 1, 2, 3]
    assert tap.stats()["callback_failures"] == 1


def test_close_delivers_what_is_queued_then_takes_no_more(pool):
    release = threading.Event()
    slow = Recorder(gate=release)
    tap = Tap("o", slow, 64, pool)
    for v in range(5):
        tap.offer(batch(v))
    assert slow.entered.wait(WAIT)
    closing = threading.Thread(target=tap.close)
    closing.start()  # waits for the batch being delivered, then delivers the rest
    release.set()
    closing.join(WAIT)
    assert not closing.is_alive() and slow.values == [0, 1, 2, 3, 4]
    tap.offer(batch(5))
    assert tap.stats()["dropped_batches"] == 1 and slow.values == [0, 1, 2, 3, 4]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_callback_ending_its_thread_leaves_the_tap_served_and_closable(pool):
    """A callback raising past ``Exception`` (``SystemExit``) ends its worker: another takes
    its place for what is in line, and the tap is not left held, so ``close`` returns."""
    seen, ended = Recorder(), []

    def exits(output: str, table: pa.Table) -> None:
        if table.column("v")[0].as_py() == 0:
            ended.append(threading.current_thread())
            raise SystemExit
        seen(output, table)

    tap = Tap("o", exits, 64, pool)
    tap.offer(batch(0))
    tap.offer(batch(1))
    assert seen.wait_for(1) == [1]
    tap.offer(batch(2))
    closing = threading.Thread(target=tap.close)
    closing.start()
    closing.join(WAIT)
    assert not closing.is_alive() and seen.values == [1, 2]
    ended[0].join(WAIT)  # its end is reported (and the warning ignored) within this test
    assert not ended[0].is_alive()


def test_a_callback_may_close_its_own_tap_or_another_with_every_worker_busy():
    """A callback that untaps: closing needs no free worker, and never waits for itself."""
    pool = DeliveryPool(1)
    go, closed = threading.Event(), threading.Event()
    other = Recorder()
    other_tap = Tap("o", other, 64, pool)

    def closer(output: str, table: pa.Table) -> None:
        assert go.wait(WAIT)
        other_tap.close()  # its batches are delivered on this, the pool's only, thread
        own.close()
        closed.set()

    own = Tap("o", closer, 64, pool)
    own.offer(batch(0))
    own.offer(batch(1))
    for v in range(3):
        other_tap.offer(batch(v))  # in line behind `own`, which holds the one worker
    go.set()
    assert closed.wait(WAIT)
    assert other.values == [0, 1, 2]
    own.close()  # closed already: returns once the worker has delivered its last batch
    assert own.stats()["pending"] == 0
    pool.close()


def test_the_threads_do_not_grow_with_the_taps(pool):
    release = threading.Event()
    before = threading.active_count()
    recorders = [Recorder(gate=release) for _ in range(200)]
    taps = [Tap("o", r, 4, pool) for r in recorders]
    for tap in taps:
        tap.offer(batch(1))
    assert recorders[0].entered.wait(WAIT)
    busy = [t for t in threading.enumerate() if t.name.startswith("deliver-")]
    assert threading.active_count() - before <= pool.threads and len(busy) == pool.threads
    release.set()
    for recorder in recorders:
        assert recorder.wait_for(1) == [1]
