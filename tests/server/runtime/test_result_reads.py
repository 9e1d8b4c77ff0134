"""Reading an output's durable result log from a position (issue 20's catch-up read): whole
batches from the position on, paged, and a clear refusal once retention dropped the rows."""

from __future__ import annotations

import pytest

from boxes.errors import Conflict, Gone
from server.runtime.outputs import Asked, OutputSink

BATCH = 4


@pytest.fixture
def sink(spark, results_place):
    """An output that keeps about 8 rows (segments of ~1 batch; on S3 an object per batch),
    fed five batches of 4 rows."""
    out = OutputSink("o", results_place, recent_rows=1, retain_rows=8, segment_bytes=1)
    for batch_id in range(5):
        first = batch_id * BATCH
        out.handle(spark.range(first, first + BATCH).toDF("n"), batch_id)
    yield out
    out.close()


def numbers(read) -> list[int]:
    return [row["n"] for table in read.tables for row in table.to_pylist()]


def test_a_read_starts_at_its_position_even_inside_a_batch_and_says_where_to_go_on(sink):
    read = sink.read_from(14, max_rows=100)
    assert numbers(read) == [14, 15, 16, 17, 18, 19]
    assert (read.start, read.next) == (14, 20)
    assert sink.read_from(20, max_rows=100).tables == []
    assert sink.read_from(20, max_rows=100).next == 20


def test_a_read_is_paged_by_whole_batches(sink):
    first = sink.read_from(12, max_rows=3)
    assert numbers(first) == [12, 13, 14, 15] and first.next == 16
    assert numbers(sink.read_from(first.next, max_rows=3)) == [16, 17, 18, 19]


def test_a_position_retention_dropped_is_refused_naming_the_oldest_kept(sink):
    oldest = sink.read_from(19, max_rows=1).oldest
    assert 0 < oldest <= 12  # at least the retained 8 rows, in whole segments
    with pytest.raises(Gone) as refused:
        sink.read_from(oldest - 1, max_rows=10)
    assert refused.value.code == "RESULTS_EXPIRED"
    assert refused.value.status == 410
    assert f"read from {oldest} or later" in refused.value.message
    assert numbers(sink.read_from(oldest, max_rows=100))[0] == oldest


def test_a_position_past_the_newest_is_refused_naming_the_newest(sink):
    """A position no result has reached (one kept from before a redeploy started the log
    again) is refused at once, naming where the log ends, not answered with nothing."""
    with pytest.raises(Conflict) as refused:
        sink.read_from(21, max_rows=10)
    assert refused.value.code == "RESULTS_BEYOND_END"
    assert "its newest position is 20" in refused.value.message


def test_the_status_shows_which_positions_a_subscriber_may_resume_from(sink):
    stats = sink.stats()
    assert stats["oldest_position"] == sink.read_from(19, max_rows=1).oldest
    assert (stats["next_position"], stats["retained_rows"]) == (20, 8)


def test_a_log_keeps_its_identity_across_a_restart_and_a_new_one_has_another(
    sink, results_place, tmp_path
):
    """A position is of one log: the log's identity is stored with it (a reopened log, as
    after a server restart, is the same one), a log started afresh has a new one, and a
    position given with another log's identity is refused, naming the output as asked."""
    same = OutputSink("o", results_place, recent_rows=1, retain_rows=8)
    fresh = OutputSink("o", tmp_path / "afresh", recent_rows=1, retain_rows=8)
    try:
        assert same.log_id == sink.log_id != fresh.log_id
        assert sink.read_from(19, 1, Asked("counts", sink.log_id)).log == sink.log_id
        with pytest.raises(Conflict) as refused:
            fresh.read_from(0, 10, Asked("counts", sink.log_id))
        assert refused.value.code == "RESULTS_RESTARTED"
        assert refused.value.details == {"log": fresh.log_id}
        assert refused.value.message.startswith("output 'counts' has a new result log")
    finally:
        same.close()
        fresh.close()
