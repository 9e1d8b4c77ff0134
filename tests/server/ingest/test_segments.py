"""The segment log on real files: ranges across segments, torn tails, truncation."""

from __future__ import annotations

import os

import pytest

from server.ingest.segments import (
    LogGap,
    Position,
    SegmentLog,
    list_segments,
    read_positions,
    read_range,
    segment_path,
    tail,
)


def fill(log: SegmentLog, frames: int, rows: int = 3) -> list[Position]:
    positions = [log.append(rows, f"frame-{i}".encode() * 10) for i in range(frames)]
    log.sync()
    return positions


def test_a_range_across_segments_reads_exactly_its_frames(tmp_path):
    log = SegmentLog(tmp_path, segment_bytes=200)
    positions = fill(log, 20)
    assert len(list_segments(tmp_path)) > 3
    frames = list(read_range(tmp_path, positions[4], positions[15]))
    assert [f.first_seq for f in frames] == [3 * i for i in range(5, 16)]
    assert frames[0].payload == b"frame-5" * 10


def test_each_frame_read_comes_with_the_position_a_read_stopped_there_resumes_at(tmp_path):
    """A bounded read stops after any frame, across segments too, and goes on exactly."""
    log = SegmentLog(tmp_path, segment_bytes=200)
    positions = fill(log, 20)
    read = list(read_positions(tmp_path, positions[0], positions[-1]))
    assert [after for _, after in read] == positions[1:]
    for at, after in enumerate(positions[:-1]):
        resumed = next(read_positions(tmp_path, after, positions[-1]))
        assert resumed == read[at]


def test_a_tail_holds_the_newest_frames_that_cover_the_rows_asked_for(tmp_path):
    log = SegmentLog(tmp_path, segment_bytes=200)
    positions = fill(log, 20)  # 60 rows, frames of 3, several segments
    assert [f.first_seq for f in tail(tmp_path, positions[-1], 7)] == [51, 54, 57]
    assert [f.first_seq for f in tail(tmp_path, positions[-1], 6)] == [54, 57]
    assert [f.first_seq for f in tail(tmp_path, positions[9], 4)] == [24, 27]  # before an end
    assert sum(f.count for f in tail(tmp_path, positions[-1], 1_000)) == 60  # all there is
    log.truncate_before(30)
    assert tail(tmp_path, positions[-1], 1_000)[0].first_seq >= 27  # compacted rows are gone
    assert tail(SegmentLog(tmp_path / "empty").directory, Position(0, 0, 0), 5) == []


def test_reopening_cuts_a_torn_tail_and_keeps_every_synced_frame(tmp_path):
    log = SegmentLog(tmp_path)
    positions = fill(log, 5)
    log.close()
    with open(segment_path(tmp_path, 0), "ab") as f:
        f.write(b"SLG1\x40\x00\x00\x00 half a frame")
    reopened = SegmentLog(tmp_path)
    assert reopened.head == positions[-1]
    assert os.path.getsize(segment_path(tmp_path, 0)) == positions[-1].pos
    assert reopened.append(1, b"next").seq == positions[-1].seq + 1


def test_a_corrupted_frame_ends_the_log_there(tmp_path):
    log = SegmentLog(tmp_path)
    positions = fill(log, 5)
    log.close()
    with open(segment_path(tmp_path, 0), "r+b") as f:
        f.seek(positions[2].pos + 30)
        f.write(b"X")
    assert SegmentLog(tmp_path).head == positions[2]


def test_truncation_deletes_only_segments_wholly_before_the_claim(tmp_path):
    log = SegmentLog(tmp_path, segment_bytes=200)
    positions = fill(log, 20)
    claim = positions[9].seq
    log.truncate_before(claim)
    assert log.oldest().seq <= claim
    assert [f.first_seq for f in read_range(tmp_path, positions[9], positions[-1])] == [
        3 * i for i in range(10, 20)
    ]
    assert log.oldest().seq > 0


def test_reading_a_range_whose_rows_are_gone_fails_loudly(tmp_path):
    log = SegmentLog(tmp_path, segment_bytes=200)
    positions = fill(log, 20)
    segment_path(tmp_path, list_segments(tmp_path)[1]).unlink()
    with pytest.raises(LogGap) as caught:
        list(read_range(tmp_path, positions[0], positions[-1]))
    assert caught.value.details["to"] == positions[-1].seq
