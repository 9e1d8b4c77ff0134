"""An output's result log: each batch written durably before anyone sees it, read back by row.

Where the log lives decides how it is written (``open_log``); reading is one function,
``read_range``, for any process (a derived input's Spark source reads another diagram's log):

* On a local filesystem, the segment log the ingestion log uses (``server/ingest/segments.py``):
  frames appended to files of about ``segment_bytes``, each append flushed with fsync.
* Anywhere else (an object store: ``s3://``, ``gs://``...), which can neither append nor
  fsync: one immutable object per batch, written with one upload, which the store makes
  visible only once complete. Its name is its first row's number (``<20 digits>.frame``), so
  a read from a row needs only a listing; retention deletes whole objects (in the background:
  a request each, which the batch being delivered should not wait for). An object holds one
  frame in the segment format (its header has the rows and a CRC).

Positions are the segment log's ``(seq, seg, pos)``; in an object log ``(seq, seq, 0)``: the
next row, the object that will hold it, and offset 0 there.
"""

from __future__ import annotations

import logging
import os
import secrets
from abc import ABC, abstractmethod
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

from server.ingest import segments
from server.ingest.segments import (
    Frame,
    Position,
    SegmentLog,
    contiguous,
    encode_frame,
    list_segments,
    parse_frames,
)
from server.runtime.storage import Location

OBJECT_SUFFIX = ".frame"
IDENTITY_FILE = "log.id"  # beside the frames: neither a segment's name nor an object's
log = logging.getLogger(__name__)
_DELETER = futures.ThreadPoolExecutor(2, thread_name_prefix="result-retention")


class ResultLog(ABC):
    """The writing side of one output's result log; one writer owns it."""

    location: Location

    @property
    @abstractmethod
    def head(self) -> Position:
        """The position after the last batch written."""

    @abstractmethod
    def append(self, count: int, payload: bytes) -> Position:
        """Write one batch's frame, durably; return the position after it."""

    @abstractmethod
    def bases(self) -> list[int]:
        """The first row of each unit retention deletes whole (segment or object), oldest first."""

    @abstractmethod
    def truncate_before(self, seq: int) -> int:
        """Delete the units whose rows all precede ``seq`` (never the newest); how many went."""

    @abstractmethod
    def close(self) -> None:
        """Release what the writer holds open."""


class SegmentResults(ResultLog):
    def __init__(self, location: Location, segment_bytes: int) -> None:
        self.location = location
        self._log = SegmentLog(Path(location), segment_bytes)

    @property
    def head(self) -> Position:
        return self._log.head

    def append(self, count: int, payload: bytes) -> Position:
        self._log.append(count, payload)
        self._log.sync()
        return self._log.head

    def bases(self) -> list[int]:
        return list_segments(Path(self.location))

    def truncate_before(self, seq: int) -> int:
        return self._log.truncate_before(seq)

    def close(self) -> None:
        self._log.close()


class ObjectResults(ResultLog):
    def __init__(self, location: Location) -> None:
        self.location = location
        self._bases = object_bases(location)
        self._head = Position(0, 0, 0)
        self._deleting: list[futures.Future] = []
        while self._bases:
            newest = read_object(location, self._bases[-1])
            if newest is not None:
                end = newest.first_seq + newest.count
                self._head = Position(end, end, 0)
                break
            # Damaged: an upload a crash cut short, on a store that shows partial writes. Its
            # batch was never delivered, and Spark runs it again.
            location.child(object_name(self._bases.pop())).delete()

    @property
    def head(self) -> Position:
        return self._head

    def append(self, count: int, payload: bytes) -> Position:
        first = self._head.seq
        self.location.child(object_name(first)).put(encode_frame(first, count, payload))
        self._bases = [*self._bases, first]  # a new list: readers may hold the old one
        self._head = Position(first + count, first + count, 0)
        return self._head

    def bases(self) -> list[int]:
        return self._bases

    def truncate_before(self, seq: int) -> int:
        """Forget the objects at once (reads from before them are refused), delete them in
        the background; what a crash or an error leaves is found again when the log opens."""
        bases = self._bases
        doomed = [b for b, successor in zip(bases, bases[1:], strict=False) if successor <= seq]
        self._bases = bases[len(doomed) :]
        if doomed:
            self._deleting = [f for f in self._deleting if not f.done()]
            self._deleting.append(_DELETER.submit(self._delete, doomed))
        return len(doomed)

    def _delete(self, bases: list[int]) -> None:
        try:
            for base in bases:
                self.location.child(object_name(base)).delete()
        except Exception:  # left to the listing when the log next opens
            log.exception("result log %s: old batches were not deleted", self.location)

    def close(self) -> None:
        """Wait for the deletions under way; nothing else is held open between uploads."""
        futures.wait(self._deleting)


def open_log(where: str | os.PathLike, segment_bytes: int = 4 << 20) -> ResultLog:
    location = Location.of(where)
    return SegmentResults(location, segment_bytes) if location.local else ObjectResults(location)


def identity(where: str | os.PathLike) -> str:
    """The log's identity: a new one when it starts afresh (an empty place), kept with its
    frames (across restarts, and when a redeploy keeping the output's state copies them), so
    a position is never read in another log than the one it was handed out by."""
    path = Location.of(where).child(IDENTITY_FILE)
    if path.exists():
        return path.read_text()
    made = secrets.token_hex(8)
    path.put(made.encode())
    return made


def object_name(first_seq: int) -> str:
    return f"{first_seq:020d}{OBJECT_SUFFIX}"


def object_bases(location: Location) -> list[int]:
    """The first row of every batch object in an object log, oldest first."""
    suffix = len(OBJECT_SUFFIX)
    names = location.names()
    return sorted(int(n[:-suffix]) for n in names if n.endswith(OBJECT_SUFFIX))


def read_object(location: Location, base: int) -> Frame | None:
    """The frame in an object; None if it is damaged. ``FileNotFoundError`` if it is gone."""
    found = next(parse_frames(location.child(object_name(base)).read_bytes()), None)
    return None if found is None or found[0].first_seq != base else found[0]


def tail(where: str | os.PathLike, end: Position, rows: int) -> list[Frame]:
    """The last frames before ``end`` holding at least ``rows`` rows (fewer if the log is
    shorter), oldest first: what an output reloads (its last batch id, its recent rows)
    without reading all it keeps (``segments.tail``)."""
    location = Location.of(where)
    if location.local:
        return segments.tail(Path(location), end, rows)
    frames: list[Frame] = []
    for base in reversed([b for b in object_bases(location) if b < end.seq]):
        frame = read_object(location, base)
        if frame is None:
            break
        frames.insert(0, frame)
        if sum(f.count for f in frames) >= rows:
            break
    return frames


def read_range(where: str | os.PathLike, start: Position, end: Position) -> Iterator[Frame]:
    """The frames of the result log at ``where`` between two of its positions; ``LogGap``
    unless they hold exactly rows ``start.seq`` to ``end.seq`` (``segments.read_range``);
    ``FileNotFoundError`` when retention deletes a unit while it is read."""
    return (frame for frame, _ in read_positions(where, start, end))


def read_positions(
    where: str | os.PathLike, start: Position, end: Position
) -> Iterator[tuple[Frame, Position]]:
    """``read_range``'s frames, each with the position after it (``segments.read_positions``);
    in an object log that is the next row's ``(seq, seq, 0)``."""
    location = Location.of(where)
    if location.local:
        return segments.read_positions(Path(location), start, end)
    objects = (
        read_object(location, base)
        for base in object_bases(location)
        if start.seq <= base < end.seq
    )
    positioned = (
        (f, Position(f.first_seq + f.count, f.first_seq + f.count, 0))
        for f in objects
        if f is not None
    )
    return contiguous(positioned, start.seq, end.seq, location)
