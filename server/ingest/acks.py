"""When recent appends to a stream were acknowledged, by the log position they ended at.

An output's end-to-end latency starts here: a micro-batch reads up to a head the log
published, and that head's acknowledgement time is when the newest rows the batch read became
durable. Only recent heads are needed (a batch ends at a head published about one batch
duration before it is delivered), so each stream keeps at most ``2 * keep`` of them, in two
flat arrays: 16 bytes a head, nothing per tuple.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left


class AckTimes:
    def __init__(self, keep: int = 4096) -> None:
        self.keep = keep
        self._seqs = array("q")
        self._times = array("d")

    def record(self, seq: int, at: float) -> None:
        """``seq`` is the head after an acknowledged append; heads only grow."""
        self._seqs.append(seq)
        self._times.append(at)
        if len(self._seqs) >= 2 * self.keep:
            del self._seqs[: self.keep]
            del self._times[: self.keep]

    def at(self, seq: int) -> float | None:
        """When the append ending at ``seq`` was acknowledged; None if not recent or not ours."""
        i = bisect_left(self._seqs, seq)
        return self._times[i] if i < len(self._seqs) and self._seqs[i] == seq else None
