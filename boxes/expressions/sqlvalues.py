"""Spark's value limits, and the literal rules the checker applies before Spark sees a diagram.

Timestamps are naive ``datetime`` meaning UTC (the session time zone). The plain-Python
reference of Spark's value semantics that the tests compare the columns against lives in
``tests/boxes/expressions/reference``, not here: users' diagrams never run through it.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from boxes.types import DataType

LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
INT_MIN, INT_MAX = -(2**31), 2**31 - 1
EPOCH = datetime(1970, 1, 1)
MICROSECOND = timedelta(microseconds=1)
# Timestamps Python can hold in any local time zone (PySpark converts results to local time):
# Spark's wider range, or the first and last day of Python's, would fail as results reach Python.
MIN_MICROS = (datetime(1, 1, 2) - EPOCH) // MICROSECOND
MAX_MICROS = (datetime(9999, 12, 30, 23, 59, 59, 999999) - EPOCH) // MICROSECOND

# A zone only after the seconds: Spark reads '2024-01-02 UTC' and '2024-01-02T01:02Z' as NULL.
_TIMESTAMP = re.compile(
    r"([+-]?)([0-9]{4,6})(?:-([0-9]{1,2})(?:-([0-9]{1,2})"
    r"(?:[ T]([0-9]{1,2})(?::([0-9]{1,2})(?::([0-9]{1,2})(?:\.([0-9]{0,9}))?"
    r" ?(Z|(?:UTC|GMT)?(?:[+-][0-9]{1,2}(?::?[0-9]{2})?)?))?)?)?)?)?"
)


def to_micros(ts: datetime) -> int:
    return (ts - EPOCH) // MICROSECOND


def from_micros(micros: int) -> datetime | None:
    if not MIN_MICROS <= micros <= MAX_MICROS:
        return None
    return EPOCH + timedelta(microseconds=micros)


MAX_LIKE_WILDCARDS = 6


def like_regex(pattern: str) -> re.Pattern[str] | str:
    """Translate a LIKE pattern; return an error message when Spark would refuse it.

    Patterns with many separate '%' are refused too: a regular expression such as
    ``.*a.*a.*a.*b`` backtracks in time that grows as a power of the text's length, and one
    user's filter must not be able to stall the executors every user shares.
    """
    if len(re.findall(r"(?<!\\)%+", pattern)) > MAX_LIKE_WILDCARDS:
        return f"a LIKE pattern may hold at most {MAX_LIKE_WILDCARDS} separate '%' wildcards"
    out, i = [], 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            if i + 1 >= len(pattern) or pattern[i + 1] not in "%_\\":
                return (
                    "in a LIKE pattern a backslash must be followed by %, _ or another "
                    f"backslash (column {i + 1} of the pattern)"
                )
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if char == "%" else "." if char == "_" else re.escape(char))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def parse_timestamp(text: str) -> datetime | None:
    """Spark's string-to-timestamp rules for the forms people write (UTC unless a zone is given).

    Region names ('Europe/Paris') are not understood here (NULL); offsets, 'Z', 'UTC' and
    'GMT' are.
    """
    match = _TIMESTAMP.fullmatch(text.strip())
    if not match or match.group(1) == "-":
        return None
    year, month, day, hour, minute, second, fraction, zone = match.groups()[1:]
    micros = int((fraction or "").ljust(6, "0")[:6])
    try:
        value = datetime(
            int(year),
            int(month or 1),
            int(day or 1),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            micros,
        )
    except ValueError:
        return None
    offset = _zone_offset_micros((zone or "").lstrip("UTCGM"))
    return None if offset is None else from_micros(to_micros(value) - offset)


def _zone_offset_micros(offset: str) -> int | None:
    """An offset such as '+02:00', '-0530' or '+1' in microseconds; None beyond Java's 18 hours."""
    if offset in ("", "Z"):
        return 0
    sign = 1 if offset[0] == "+" else -1
    digits = offset[1:].replace(":", "")
    hours, minutes = (digits[:-2], digits[-2:]) if len(digits) > 2 else (digits, "0")
    seconds = int(hours) * 3600 + int(minutes) * 60
    return None if seconds > 18 * 3600 else sign * seconds * 1_000_000


# CAST pairs Spark's try_cast supports between Sluice's types: every pair but boolean and
# timestamp, which Spark refuses in either direction.
CASTABLE = frozenset(
    (source, target)
    for source in DataType
    for target in DataType
    if {source, target} != {DataType.BOOLEAN, DataType.TIMESTAMP}
)
