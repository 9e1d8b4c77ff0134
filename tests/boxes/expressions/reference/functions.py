"""How each allow-listed function computes in plain Python, by its canonical name.

The Spark builders live in ``boxes/expressions/functions.py``; these are the independent
reference the differential tests compare them against.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from boxes.expressions.functions import MAX_PAD, MAX_STRING
from boxes.expressions.geo import EARTH_RADIUS_KM, parse_polygon
from boxes.expressions.sqlvalues import (
    INT_MAX,
    INT_MIN,
    MAX_MICROS,
    MIN_MICROS,
    from_micros,
    parse_timestamp,
    to_micros,
)
from tests.boxes.expressions.reference.values import compare, long_or_null, order_key, round_half_up


def _substring_py(text: str, pos: int, length: int = INT_MAX) -> str | None:
    if not (INT_MIN <= pos <= INT_MAX and INT_MIN <= length <= INT_MAX):
        return None
    size = len(text)
    start = pos - 1 if pos > 0 else size + pos if pos < 0 else 0
    end = max(min(start + length, INT_MAX), INT_MIN)
    start = max(start, 0)
    return "" if start >= end else text[start:end]


def _pad_py(left: bool) -> Callable[[str, int, str], str | None]:
    def pad(text: str, size: int, fill: str) -> str | None:
        if size > MAX_PAD:
            return None
        spaces = size - len(text)
        if spaces <= 0 or not fill:
            return text[: max(size, 0)]
        filler = (fill * (spaces // len(fill) + 1))[:spaces]
        return filler + text if left else text + filler

    return pad


def _replace_py(text: str, search: str, replacement: str) -> str | None:
    if len(text) * len(replacement) / max(len(search), 1) > MAX_STRING:
        return None
    return text.replace(search, replacement) if search else text


def _concat_py(*parts: str) -> str | None:
    return None if sum(len(p) for p in parts) > MAX_STRING else "".join(parts)


def _abs_py(value: Any) -> Any:
    return long_or_null(abs(value)) if isinstance(value, int) else abs(value)


def _round_py(value: Any, digits: int = 0) -> Any:
    return value if isinstance(value, int) else round_half_up(value, digits)


def _to_long_py(op: Callable[[float], int]) -> Callable[[Any], int | None]:
    def convert(value: Any) -> int | None:
        if isinstance(value, int):
            return value
        if math.isnan(value) or not -(2.0**63) <= value < 2.0**63:
            return None
        return op(value)

    return convert


def _sqrt_py(value: float) -> float:
    return math.nan if value < 0 else math.sqrt(value)


def _exp_py(value: float) -> float:
    try:
        return math.exp(value)
    except OverflowError:
        return math.inf


def _log_py(op: Callable[[float], float]) -> Callable[[float], float | None]:
    def log(value: float) -> float | None:
        return None if value <= 0 else op(value)

    return log


def _pow_py(base: float, exponent: float) -> float:
    """Java's Math.pow: overflow gives infinity and a domain error NaN, never an exception."""
    odd = exponent.is_integer() and exponent % 2 == 1
    try:
        return math.pow(base, exponent)
    except OverflowError:
        return -math.inf if base < 0 and odd else math.inf
    except ValueError:
        if base == 0:
            return -math.inf if odd and math.copysign(1.0, base) < 0 else math.inf
        return math.nan


def _sign_py(value: float) -> float:
    return value if value == 0 or math.isnan(value) else math.copysign(1.0, value)


def _java_math(op: Callable[..., float]) -> Callable[..., float]:
    """Java's Math: a domain error (sin of infinity, asin of 2) is NaN, never an exception."""

    def call(*args: float) -> float:
        try:
            return op(*args)
        except ValueError:
            return math.nan

    return call


def _atan2_py(y: float, x: float) -> float:
    """Spark adds 0.0 to both sides first, so -0.0 counts as 0.0 (atan2(0.0, -0.0) is 0, not pi)."""
    return math.atan2(y + 0.0, x + 0.0)


def _position(lon: float, lat: float) -> bool:
    """In range (NaN and infinities are not: Spark's NaN sorts above every number)."""
    return -180.0 <= lon <= 180.0 and -90.0 <= lat <= 90.0


def _distance_km_py(lon1: float, lat1: float, lon2: float, lat2: float) -> float | None:
    """The haversine formula, written the way geo.distance_km orders its operations."""
    if not (_position(lon1, lat1) and _position(lon2, lat2)):
        return None
    half_dlat = math.sin(math.radians(lat2 - lat1) / 2.0)
    half_dlon = math.sin(math.radians(lon2 - lon1) / 2.0)
    h = half_dlat * half_dlat + math.cos(math.radians(lat1)) * math.cos(math.radians(lat2)) * (
        half_dlon * half_dlon
    )
    h = min(h, 1.0)
    return 2.0 * math.atan2(math.sqrt(h), math.sqrt(1.0 - h)) * EARTH_RADIUS_KM


def _point_in_box_py(*coordinates: float) -> bool | None:
    lon, lat, west, south, east, north = coordinates
    if not (_position(lon, lat) and _position(west, south) and _position(east, north)):
        return None
    across = west <= lon <= east if west <= east else lon >= west or lon <= east
    return south <= lat <= north and across


def _point_in_polygon_py(lon: float, lat: float, polygon: str) -> bool | None:
    """Even-odd ray casting (W. R. Franklin's PNPOLY), inside the ring's bounding box."""
    if not _position(lon, lat):
        return None
    ring = parse_polygon(polygon)
    assert not isinstance(ring, str), ring
    xs, ys = [x for x, _ in ring], [y for _, y in ring]
    if not (min(xs) <= lon <= max(xs) and min(ys) <= lat <= max(ys)):
        return False
    inside = False
    for (x0, y0), (x1, y1) in zip(ring, ring[1:] + ring[:1], strict=True):
        if (lat < y0) != (lat < y1) and lon < (lat - y0) * ((x1 - x0) / (y1 - y0)) + x0:
            inside = not inside
    return inside


def _extreme_py(largest: bool) -> Callable[..., Any]:
    def pick(*values: Any) -> Any:
        present = [v for v in values if v is not None]
        if not present:
            return None
        return (max if largest else min)(present, key=order_key)

    return pick


def _coalesce_py(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def _nullif_py(value: Any, other: Any) -> Any:
    if value is None or other is None:
        return value
    return None if compare(value, other) == 0 else value


def _trunc_py(unit: str, ts: datetime) -> datetime:
    unit = unit.lower()
    if unit == "microsecond":
        return ts
    if unit == "millisecond":
        return ts.replace(microsecond=ts.microsecond // 1000 * 1000)
    if unit == "week":
        day = ts.replace(hour=0, minute=0, second=0, microsecond=0)
        return day - timedelta(days=day.weekday())
    if unit == "quarter":
        ts = ts.replace(month=(ts.month - 1) // 3 * 3 + 1)
        unit = "month"
    order = ("year", "month", "day", "hour", "minute", "second")
    reset = {"month": 1, "day": 1, "hour": 0, "minute": 0, "second": 0}
    keep = order.index(unit)
    return ts.replace(
        microsecond=0, **{name: value for name, value in reset.items() if order.index(name) > keep}
    )


def _timestamp_seconds_py(seconds: int) -> datetime | None:
    if not MIN_MICROS // 1_000_000 <= seconds <= MAX_MICROS // 1_000_000:
        return None
    return from_micros(seconds * 1_000_000)


def _part(attribute: str) -> Callable[[datetime], int]:
    return lambda ts: getattr(ts, attribute)


PYTHON: dict[str, Callable[..., Any]] = {
    "lower": str.lower,
    "upper": str.upper,
    "length": len,
    "trim": lambda s: s.strip(" "),
    "ltrim": lambda s: s.lstrip(" "),
    "rtrim": lambda s: s.rstrip(" "),
    "substring": _substring_py,
    "concat": _concat_py,
    "replace": _replace_py,
    "starts_with": str.startswith,
    "ends_with": str.endswith,
    "contains": lambda s, part: part in s,
    "lpad": _pad_py(left=True),
    "rpad": _pad_py(left=False),
    "abs": _abs_py,
    "round": _round_py,
    "floor": _to_long_py(math.floor),
    "ceil": _to_long_py(math.ceil),
    "sqrt": _sqrt_py,
    "exp": _exp_py,
    "ln": _log_py(math.log),
    "log10": _log_py(math.log10),
    "pow": _pow_py,
    "sign": _sign_py,
    "sin": _java_math(math.sin),
    "cos": _java_math(math.cos),
    "tan": _java_math(math.tan),
    "asin": _java_math(math.asin),
    "acos": _java_math(math.acos),
    "atan": math.atan,
    "atan2": _atan2_py,
    "radians": math.radians,
    "degrees": math.degrees,
    "distance_km": _distance_km_py,
    "point_in_box": _point_in_box_py,
    "point_in_polygon": _point_in_polygon_py,
    "greatest": _extreme_py(True),
    "least": _extreme_py(False),
    "coalesce": _coalesce_py,
    "nullif": _nullif_py,
    "year": _part("year"),
    "month": _part("month"),
    "day": _part("day"),
    "hour": _part("hour"),
    "minute": _part("minute"),
    "second": _part("second"),
    "date_trunc": _trunc_py,
    "unix_timestamp": lambda ts: to_micros(ts) // 1_000_000,
    "to_timestamp": parse_timestamp,
    "timestamp_seconds": _timestamp_seconds_py,
}
