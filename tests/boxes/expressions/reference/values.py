"""Spark's value semantics in plain Python: the reference the evaluator and the functions use.

Values are Python ``int`` (long), ``float`` (double), ``str``, ``bool`` and naive ``datetime``
meaning UTC (the session time zone). Where Spark in ANSI mode would raise (overflow, a bad
cast), Sluice's columns yield NULL instead, and so do these functions.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Any

from boxes.expressions.sqlvalues import LONG_MAX, LONG_MIN, from_micros, parse_timestamp, to_micros
from boxes.types import DataType


def long_or_null(value: int) -> int | None:
    return value if LONG_MIN <= value <= LONG_MAX else None


def order_key(value: Any) -> tuple:
    """Sort key with Spark's rule that NaN is larger than every other double (and equals NaN)."""
    if isinstance(value, float) and math.isnan(value):
        return (1, 0.0)
    return (0, value)


def compare(left: Any, right: Any) -> int:
    a, b = order_key(left), order_key(right)
    return (a > b) - (a < b)


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
    return float(Decimal(repr(value)).quantize(Decimal(1).scaleb(-digits), ROUND_HALF_UP, context))


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
    special = {
        "nan": math.nan,
        "infinity": math.inf,
        "+infinity": math.inf,
        "-infinity": -math.inf,
        "inf": math.inf,
        "+inf": math.inf,
        "-inf": -math.inf,
    }
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
    micros = seconds * 1_000_000
    if math.isnan(micros) or math.isinf(micros):  # 1e308 seconds overflow to infinity
        return None
    return from_micros(int(micros))


_CASTS = {
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
