"""The result log in a local directory (segments) and on a real S3 API (an object per batch):
one way to write and read both, retention by whole units, and what a reopened log recovers."""

from __future__ import annotations

import pytest

from server.ingest.segments import LogGap, Position, encode_frame
from server.runtime.resultlog import (
    ObjectResults,
    SegmentResults,
    object_name,
    open_log,
    read_positions,
    read_range,
    tail,
)
from server.runtime.storage import Location


def fill(where, counts: list[int]) -> list[Position]:
    log = open_log(where, segment_bytes=1)  # a segment per batch, like an object per batch
    try:
        return [log.append(count, f"batch of {count}".encode()) for count in counts]
    finally:
        log.close()


def test_reads_from_a_position_get_whole_batches_and_retention_drops_whole_units(results_place):
    heads = fill(results_place, [2, 3, 1, 4])
    assert [h.seq for h in heads] == [2, 5, 6, 10]
    frames = list(read_range(results_place, heads[0], heads[2]))
    assert [(f.first_seq, f.count, f.payload) for f in frames] == [
        (2, 3, b"batch of 3"),
        (5, 1, b"batch of 1"),
    ]
    log = open_log(results_place)
    assert (log.head, log.bases()) == (heads[-1], [0, 2, 5, 6])
    assert log.truncate_before(5) == 2  # rows 0-4 are in the first two units
    log.close()
    reopened = open_log(results_place)
    assert reopened.bases() == [5, 6] and reopened.head == heads[-1]
    assert [f.first_seq for f in tail(results_place, reopened.head, 1)] == [6]
    assert [f.first_seq for f in tail(results_place, reopened.head, 5)] == [5, 6]
    reopened.close()


def test_each_batch_read_comes_with_the_position_a_read_stopped_there_resumes_at(
    results_place,
):
    heads = fill(results_place, [2, 3, 1, 4])
    read = list(read_positions(results_place, Position(0, 0, 0), heads[-1]))
    assert [after for _, after in read] == heads
    assert [f.first_seq for f, _ in read_positions(results_place, heads[1], heads[-1])] == [5, 6]


def test_the_kind_follows_the_place(tmp_path, s3_url):
    assert isinstance(open_log(tmp_path / "r"), SegmentResults)
    assert isinstance(open_log(f"file://{tmp_path}/r"), SegmentResults)
    on_s3 = open_log(s3_url)
    assert isinstance(on_s3, ObjectResults)
    fill(s3_url, [2, 3])
    assert Location.of(s3_url).names() == [object_name(0), object_name(2)]
    assert object_name(2) == "00000000000000000002.frame"


def test_a_missing_object_is_a_gap_a_reader_is_told_of(s3_url):
    heads = fill(s3_url, [1, 1, 1])
    Location.of(s3_url).child(object_name(1)).delete()
    with pytest.raises(LogGap):
        list(read_range(s3_url, Position(0, 0, 0), heads[-1]))


def test_an_upload_cut_short_is_dropped_when_the_log_reopens(s3_url):
    """On a store that shows partial writes (HDFS; S3 does not) a crash mid-upload leaves a
    torn last object; its batch was never delivered, so reopening deletes it."""
    heads = fill(s3_url, [2, 3])
    torn = encode_frame(5, 4, b"never delivered")[:-3]
    Location.of(s3_url).child(object_name(5)).put(torn)
    log = open_log(s3_url)
    assert log.head == heads[-1] and log.bases() == [0, 2]
    assert Location.of(s3_url).names() == [object_name(0), object_name(2)]
    assert log.append(1, b"next") == Position(6, 6, 0)
