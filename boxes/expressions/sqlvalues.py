"""Spark's value semantics in plain Python: the reference the evaluator and the function table use.

Values are Python ``int`` (long), ``float`` (double), ``str``, ``bool`` and naive ``datetime``
meaning UTC (the session time zone). Where Spark in ANSI mode would raise (overflow, a bad
cast), Sluice's columns yield NULL instead, and so do these functions.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Any

from boxes.types import DataType

LONG_MIN, LONG_MAX = -(2 ** 63), 2 ** 63 - 1
INT_MIN, INT_MAX = -(2 ** 31), 2 ** 31 - 1
EPOCH = datetime(1970, 1, 1)
MICROSECOND = timedelta(microseconds=1)
# Timestamps Python can hold in any local time zone (PySpark converts results to local time):
# Spark's wider range, or the first and last day of Python's, would fail as results reach Python.
MIN_MICROS = (datetime(1, 1, 2) - EPOCH) // MICROSECOND
MAX_MICROS = (datetime(9999, 12, 30, 23, 59, 59, 999999) - EPOCH) // MICROSECOND

_TIMESTAMP = re.compile(
    r"([+-]?)([0-9]{4,6})(?:-([0-9]{1,2})(?:-([0-9]{1,2})"
    r"(?:[ T]([0-9]{1,2})(?::([0-9]{1,2})(?::([0-9]{1,2})(?:\.([0-9]{0,9}))?)?)?)?)?)?"
    r" ?(Z|(?:UTC|GMT)?(?:[+-][0-9]{1,2}(?::?[0-9]{2})?)?)")


def long_or_null(value: int) -> int | None:
    return value if LONG_MIN <= value <= LONG_MAX else None


def to_micros(ts: datetime) -> int:
    return (ts - EPOCH) // MICROSECOND


def from_micros(micros: int) -> datetime | None:
    if not MIN_MICROS <= micros <= MAX_MICROS:
        return None
    return EPOCH + timedelta(microseconds=micros)


def order_key(value: Any) -> tuple:
    """Sort key with Spark's rule that NaN is larger than every other double (and equals NaN)."""
    if isinstance(value, float) and math.isnan(value):
        return (1, 0.0)
    return (0, value)


def compare(left: Any, right: Any) -> int:
    a, b = order_key(left), order_key(right)
    return (a > b) - (a < b)


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
                return ("in a LIKE pattern a backslash must be followed by %, _ or another "
                        f"backslash (column {i + 1} of the pattern)")
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
        value = datetime(int(year), int(month or 1), int(day or 1), int(hour or 0),
                         int(minute or 0), int(second or 0), micros)
    except ValueError:
        return None
    offset = _zone_offset_micros(zone.lstrip("UTCGM"))
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


def format_double(value: float) -> str:
    """Java's ``Double.toString``, which Spark uses to cast a double to a string.

    This is the shortest-digits form of Java 19 and later; Java 17 occasionally prints one
    more digit (6.3796441829285584E16 for 6.379644182928558E16), which parses back to the same
    double.
    """
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    if 1e-3 <= abs(value) < 1e7:
        text = repr(value)
        return text if "." in text else text + ".0"
    mantissa, exponent = f"{value:.17e}".split("e")
    digits = repr(value).lower().split("e")[0].replace("-", "").replace(".", "").lstrip("0")
    digits = digits.rstrip("0") or "0"
    sign = "-" if value < 0 else ""
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{int(exponent)}"


def format_timestamp(value: datetime) -> str:
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    if value.microsecond:
        text += ("." + f"{value.microsecond:06d}").rstrip("0")
    return text


def round_half_up(value: float, digits: int) -> float:
    """Spark rounds the decimal text of a double (so 2.675 rounds to 2.68), half away from zero."""
    if math.isnan(value) or math.isinf(value):
        return value
    context = Context(prec=800)
    return float(Decimal(repr(value)).quantize(Decimal(1).scaleb(-digits), ROUND_HALF_UP,
                                               context))


def cast(value: Any, source: DataType, target: DataType) -> Any:
    """CAST as Sluice builds it: Spark's try_cast; a value that does not convert becomes NULL."""
    if value is None or source is target:
        return value
    return _CASTS[(source, target)](value)


def _string_to_long(text: str) -> int | None:
    match = re.fullmatch(r"\s*([+-]?[0-9]+)\s*", text)
    return long_or_null(int(match.group(1))) if match else None


def _string_to_double(text: str) -> float | None:
    stripped = text.strip()
    special = {"nan": math.nan, "infinity": math.inf, "+infinity": math.inf,
               "-infinity": -math.inf, "inf": math.inf, "+inf": math.inf, "-inf": -math.inf}
    if stripped.lower() in special:
        return special[stripped.lower()]
    if not re.fullmatch(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[dDfF]?", stripped):
        return None
    return float(stripped.rstrip("dDfF"))


def _string_to_boolean(text: str) -> bool | None:
    word = text.strip().lower()
    if word in ("t", "true", "y", "yes", "1"):
        return True
    if word in ("f", "false", "n", "no", "0"):
        return False
    return None


def _double_to_long(value: float) -> int | None:
    """Spark's ANSI check compares with the long bounds as doubles, so 2**63 saturates."""
    if math.isnan(value) or math.isinf(value):
        return None
    if not (math.floor(value) <= float(LONG_MAX) and math.ceil(value) >= float(LONG_MIN)):
        return None
    return max(LONG_MIN, min(LONG_MAX, int(value)))


def _seconds_to_timestamp(seconds: float) -> datetime | None:
    if math.isnan(seconds) or math.isinf(seconds):
        return None
    return from_micros(int(seconds * 1_000_000))


_CASTS: dict[tuple[DataType, DataType], Callable[[Any], Any]] = {
    (DataType.STRING, DataType.LONG): _string_to_long,
    (DataType.STRING, DataType.DOUBLE): _string_to_double,
    (DataType.STRING, DataType.BOOLEAN): _string_to_boolean,
    (DataType.STRING, DataType.TIMESTAMP): parse_timestamp,
    (DataType.LONG, DataType.STRING): str,
    (DataType.LONG, DataType.DOUBLE): float,
    (DataType.LONG, DataType.BOOLEAN): bool,
    (DataType.LONG, DataType.TIMESTAMP): lambda v: from_micros(v * 1_000_000),
    (DataType.DOUBLE, DataType.STRING): format_double,
    (DataType.DOUBLE, DataType.LONG): _double_to_long,
    (DataType.DOUBLE, DataType.BOOLEAN): lambda v: v != 0,
    (DataType.DOUBLE, DataType.TIMESTAMP): _seconds_to_timestamp,
    (DataType.BOOLEAN, DataType.STRING): lambda v: "true" if v else "false",
    (DataType.BOOLEAN, DataType.LONG): int,
    (DataType.BOOLEAN, DataType.DOUBLE): float,
    (DataType.TIMESTAMP, DataType.STRING): format_timestamp,
    (DataType.TIMESTAMP, DataType.LONG): lambda v: to_micros(v) // 1_000_000,
    (DataType.TIMESTAMP, DataType.DOUBLE): lambda v: float(to_micros(v)) / 1_000_000,
}
CASTABLE = frozenset(_CASTS) | {(t, t) for t in DataType}
