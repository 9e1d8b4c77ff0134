"""Output sinks fed real Spark DataFrames: exactly-once by batch id, last-N, slow consumers;
each with its result log in a local directory and on S3 (``results_place``)."""

from __future__ import annotations

import threading
import time

import pytest
from runtime_helpers import Collector, read_results

from boxes.errors import Gone
from server.runtime.outputs import BATCH_KEY, NEXT_KEY, OutputSink


@pytest.fixture
def frames(spark):
    def make(*values: int):
        return spark.createDataFrame([(v,) for v in values], "v BIGINT")

    return make


def test_a_batch_already_logged_is_not_delivered_again_after_reopening(results_place, frames):
    seen = Collector()
    sink = OutputSink("o", results_place, recent_rows=10, retain_rows=100)
    sink.tap(seen)
    sink.handle(frames(1, 2), 0)
    sink.handle(frames(3), 1)
    sink.close()
    reopened = OutputSink("o", results_place, recent_rows=10, retain_rows=100)
    reopened.tap(seen)
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


def test_a_slow_tap_loses_batches_counted_while_others_get_all_in_order(results_place, frames):
    entered, release = threading.Event(), threading.Event()
    slow_rows = []

    def slow(output, table):
        slow_rows.extend(table.column("v").to_pylist())
        entered.set()
        release.wait()

    fast = Collector()
    sink = OutputSink("o", results_place, recent_rows=10, retain_rows=100)
    slow_tap = sink.tap(slow, max_pending=2)
    sink.tap(fast)
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
    results_place, frames
):
    acked = {0: time.monotonic() - 0.5}
    seen = Collector()
    sink = OutputSink("o", results_place, recent_rows=10, retain_rows=100, acked=acked.__getitem__)
    sink.tap(seen)
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
