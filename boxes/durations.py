"""Durations as people write them in documents: ``500ms``, ``10s``, ``1m``, ``2h``, ``1d``.

One spelling, always with a unit, so ``10`` cannot mean seconds to one reader and
milliseconds to another. Parsing is pure; Spark receives a whole number of milliseconds.
"""

from __future__ import annotations

import re

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
# Longer than any sensible window, short enough that milliseconds stay exact in a long.
MAX_SECONDS = 366 * 86400.0


def parse_duration(text: object) -> float | None:
    """Seconds for ``text``, or None if it is not a duration in [0, MAX_SECONDS]."""
    if not isinstance(text, str):
        return None
    match = _DURATION.match(text)
    if match is None:
        return None
    seconds = float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    return seconds if seconds <= MAX_SECONDS else None


def duration_of(text: object) -> float:
    """Seconds for a duration that the document's parameter checks accepted already."""
    seconds = parse_duration(text)
    if seconds is None:
        raise ValueError(f"not a duration: {str(text)[:40]!r}")
    return seconds


def spark_interval(seconds: float) -> str:
    """The interval string Spark's ``window`` and ``withWatermark`` accept, in milliseconds."""
    return f"{round(seconds * 1000)} milliseconds"
