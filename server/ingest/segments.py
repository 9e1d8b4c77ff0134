"""An append-only log of checksummed frames in segment files, shared by input and output logs.

Each frame holds ``count`` rows numbered from ``first_seq`` (an Arrow IPC payload). A
position ``(seq, seg, pos)`` names the boundary after a frame: the next row number, the
segment holding it (segments are named by the first row they hold) and the byte offset in
that segment. Positions are plain data, so a Spark checkpoint can record them and any
process with the directory can read a range back without an index.

A frame of no rows is a *control frame*, the log's own record (an ingestion log's security
punctuations and shield snapshots: ``server/ingest/punctuated.py``): ``read_range`` and
``tail``, which read rows, skip it; ``scan`` yields it.

A crash can leave a torn frame at the end of the last segment; opening the log cuts it
off (its rows were never acknowledged, since acknowledging waits for ``sync``).
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from boxes import codes
from boxes.errors import SluiceError
from server.ingest.durable import fsync_dir, make_dirs_durably

HEADER = struct.Struct("<4sIQI I")  # magic, payload length, first row, row count, CRC32
MAGIC = b"SLG1"
SUFFIX = ".seg"


@dataclass(frozen=True)
class Position:
    """The boundary after a frame: next row number, its segment and the byte offset there."""

    seq: int
    seg: int
    pos: int

    def to_list(self) -> list[int]:
        return [self.seq, self.seg, self.pos]

    @classmethod
    def from_list(cls, raw) -> Position:
        seq, seg, pos = raw
        return cls(int(seq), int(seg), int(pos))


@dataclass(frozen=True)
class Frame:
    first_seq: int
    count: int
    payload: bytes


def segment_path(directory: Path, base: int) -> Path:
    return Path(directory) / f"{base:020d}{SUFFIX}"


def list_segments(directory: Path) -> list[int]:
    return sorted(int(p.name[: -len(SUFFIX)]) for p in Path(directory).glob(f"*{SUFFIX}"))


def encode_frame(first_seq: int, count: int, payload: bytes) -> bytes:
    return HEADER.pack(MAGIC, len(payload), first_seq, count, zlib.crc32(payload)) + payload


def scan(path: Path, start: int = 0, end: int | None = None) -> Iterator[tuple[Frame, int]]:
    """Yield each whole, intact frame in ``path`` from byte ``start`` with the offset after it."""
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read() if end is None else f.read(end - start)
    yield from parse_frames(data, start)


def parse_frames(data: bytes, start: int = 0) -> Iterator[tuple[Frame, int]]:
    """Each whole, intact frame at the start of ``data`` (read from byte ``start`` of its
    file), with the offset after it; stops at the first torn or damaged one."""
    offset = 0
    while offset + HEADER.size <= len(data):
        magic, length, first_seq, count, crc = HEADER.unpack_from(data, offset)
        body = offset + HEADER.size
        payload = data[body : body + length]
        if magic != MAGIC or len(payload) != length or zlib.crc32(payload) != crc:
            return
        offset = body + length
        yield Frame(first_seq, count, payload), start + offset


class LogGap(SluiceError):
    """Rows a reader was promised are not in the log (deleted or damaged segments)."""

    code = codes.LOG_GAP


def read_range(directory: Path, start: Position, end: Position) -> Iterator[Frame]:
    """The frames between two positions of the log in ``directory`` (any process may call this).

    Raises ``LogGap`` unless the frames cover exactly rows ``start.seq`` to ``end.seq``: a
    query must fail loudly rather than skip rows it was promised.
    """
    return (frame for frame, _ in read_positions(directory, start, end))


def read_positions(
    directory: Path, start: Position, end: Position
) -> Iterator[tuple[Frame, Position]]:
    """``read_range``'s frames, each with the position after it: a frame boundary where a
    reader that stops early (a bounded read, ``source.SourceRows.between``) resumes exactly."""

    def frames() -> Iterator[tuple[Frame, Position]]:
        for base in list_segments(directory):
            if base < start.seg or base > end.seg:
                continue
            first = start.pos if base == start.seg else 0
            last = end.pos if base == end.seg else None
            for frame, after in scan(segment_path(directory, base), first, last):
                yield frame, Position(frame.first_seq + frame.count, base, after)

    return contiguous(frames(), start.seq, end.seq, directory)


def contiguous(
    frames: Iterator[tuple[Frame, Position]], first: int, end: int, where: object
) -> Iterator[tuple[Frame, Position]]:
    """The frames with rows (each with the position after it), while they hold rows
    ``first``, ``first + 1``... on; ``LogGap`` (naming the log ``where``) unless they reach
    exactly row ``end``. A reader that stops early is told of no gap past where it stopped."""
    expected = first
    for frame, after in frames:
        if frame.first_seq != expected:
            break
        expected += frame.count
        if frame.count:
            yield frame, after
    if expected != end:
        raise LogGap(
            directory=where,
            first=expected,
            last=end - 1,
            details={"log": str(where), "from": expected, "to": end},
        )


def tail(directory: Path, end: Position, rows: int) -> list[Frame]:
    """The last frames before ``end`` that hold at least ``rows`` rows (fewer if the log is
    shorter), oldest first. Segments dropped by compaction meanwhile are simply not read: a
    tail is a sample, not a promise like ``read_range``."""
    frames: list[Frame] = []
    held = 0
    for base in reversed([b for b in list_segments(directory) if b <= end.seg]):
        try:
            last = end.pos if base == end.seg else None
            found = [f for f, _ in scan(segment_path(directory, base), 0, last) if f.count]
        except FileNotFoundError:
            break
        frames[:0] = found
        held += sum(f.count for f in found)
        if held >= rows:
            break
    while frames and held - frames[0].count >= rows:
        held -= frames.pop(0).count
    return frames


class SegmentLog:
    """The writing side of one log directory. Not thread-safe: one writer owns it."""

    def __init__(self, directory: Path, segment_bytes: int = 64 << 20) -> None:
        self.directory = Path(directory)
        self.segment_bytes = segment_bytes
        make_dirs_durably(self.directory)
        self._fd: int | None = None
        self._dir_dirty = False
        self._recover()

    def _recover(self) -> None:
        segments = list_segments(self.directory)
        if not segments:
            self._open_segment(0)
            self.head = Position(0, 0, 0)
            return
        base = segments[-1]
        path = segment_path(self.directory, base)
        seq, pos = base, 0
        for frame, after in scan(path):
            seq, pos = frame.first_seq + frame.count, after
        if pos != path.stat().st_size:
            os.truncate(path, pos)  # a torn, never-acknowledged tail
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        self.head = Position(seq, base, pos)

    def _open_segment(self, base: int) -> None:
        if self._fd is not None:
            os.fdatasync(self._fd)
            os.close(self._fd)
        path = segment_path(self.directory, base)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._dir_dirty = True

    def append(self, count: int, payload: bytes) -> Position:
        """Write one frame (not yet durable: call ``sync``); return the position after it."""
        if self.head.pos >= self.segment_bytes:
            self._open_segment(self.head.seq)
            self.head = Position(self.head.seq, self.head.seq, 0)
        os.write(self._open_fd, encode_frame(self.head.seq, count, payload))
        self.head = Position(
            self.head.seq + count, self.head.seg, self.head.pos + HEADER.size + len(payload)
        )
        return self.head

    @property
    def rolls(self) -> bool:
        """Whether the next ``append`` starts a new segment."""
        return self.head.pos >= self.segment_bytes

    def frames_from_snapshot(self, is_snapshot) -> Iterator[Frame]:
        """Every frame from the first of the newest segment whose first frame
        ``is_snapshot(frame)``, or from the oldest segment kept if none is."""
        segments = list_segments(self.directory)
        start = 0
        for at in range(len(segments) - 1, -1, -1):
            first = next(scan(segment_path(self.directory, segments[at])), None)
            if first is not None and is_snapshot(first[0]):
                start = at
                break
        for base in segments[start:]:
            for frame, _ in scan(segment_path(self.directory, base)):
                yield frame

    @property
    def _open_fd(self) -> int:
        """The open segment's descriptor: none only once the log is closed."""
        assert self._fd is not None, "the log is closed"
        return self._fd

    def sync(self) -> None:
        os.fdatasync(self._open_fd)
        if self._dir_dirty:
            fsync_dir(self.directory)
            self._dir_dirty = False

    def oldest(self) -> Position:
        """The position before the first row still kept."""
        base = list_segments(self.directory)[0]
        return Position(base, base, 0)

    def truncate_before(self, seq: int) -> int:
        """Delete whole segments whose rows all precede ``seq``; return how many were deleted."""
        segments = list_segments(self.directory)
        doomed = [
            base
            for base, successor in zip(segments, segments[1:], strict=False)
            if successor <= seq
        ]
        for base in doomed:
            segment_path(self.directory, base).unlink()
        return len(doomed)

    def read(self, start: Position, end: Position | None = None) -> Iterator[Frame]:
        return read_range(self.directory, start, end or self.head)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
