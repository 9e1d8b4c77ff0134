"""One tuple coercion: what a tuple may hold, for the server's ingestion and for ``sluice run``.

A tuple is an object with only its schema's fields. Every field is required except the
event-time field, which takes the arrival time when it is left out. ``null`` is never a value,
in any field (the event-time field is left out, not set to null). Types are strict: no bool
as a number, integers fit in 64 bits, doubles are finite, strings are UTF-8 text of at most
``max_string_bytes``, timestamps are ISO-8601 strings (UTC unless they say otherwise),
``datetime`` objects or seconds since the epoch, from year 1 to 9999 (Spark's range) in either
form: an ISO year 10000 or 0 is refused with the same reason as epoch seconds past 9999. Values
come out as their Arrow column takes them (a timestamp as microseconds since the epoch).

>>> from boxes.types import parse_schema
>>> coerce = TupleCoercion(parse_schema({"fields": {"n": "long"}}, "s")[0])
>>> coerce(0, {"n": True}, arrival_us=0)
(None, [TupleProblem(index=0, field='n', reason='expected an integer, got True')])
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from boxes.types import DataType, Schema

MAX_STRING_BYTES = 64 << 10
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
# An ISO date whose year is outside 1-9999 (five or more digits, negative, or year 0), which
# ``fromisoformat`` cannot parse: refused as out of range, as its epoch-seconds twin is.
_ISO_YEAR_OUT = re.compile(r"[+-]?\d{5,}-|[+-]?0000-|-\d{4}-")
_MICRO = timedelta(microseconds=1)


def micros(dt: datetime) -> int:
    """Microseconds since the epoch, exactly (a naive datetime is UTC)."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return (dt - EPOCH) // _MICRO


MICROS_MIN = micros(datetime.min)
MICROS_MAX = micros(datetime.max)


@dataclass(frozen=True)
class TupleProblem:
    """What is wrong with one tuple (``field`` is None when it is not about one field)."""

    index: int
    field: str | None
    reason: str

    def __str__(self) -> str:
        return (f"field {self.field!r}: " if self.field else "") + self.reason

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "field": self.field, "reason": self.reason}


def _timestamp(value: Any) -> int:
    if isinstance(value, datetime):
        found = micros(value)
    elif isinstance(value, str):
        try:
            found = micros(datetime.fromisoformat(value))
        except ValueError:
            if _ISO_YEAR_OUT.match(value):
                found = MICROS_MAX + 1
            else:
                raise ValueError(f"expected an ISO-8601 timestamp, got {value!r}") from None
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        found = round(value * 1_000_000)
    else:
        raise ValueError(f"expected a timestamp (ISO-8601 string or epoch seconds), got {value!r}")
    if not MICROS_MIN <= found <= MICROS_MAX:
        raise ValueError(f"timestamp {value!r} is outside the years 1 to 9999")
    return found


def _long(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"expected an integer, got {value!r}")
    if not LONG_MIN <= value <= LONG_MAX:
        raise ValueError(f"integer {value} does not fit in 64 bits")
    return value


def _double(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"expected a finite number, got {value!r}")
    return float(value)


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {value!r}")
    return value


_NULL = {
    False: "null is not a value (every field is required)",
    True: "null is not a value (leave the event-time field out for the arrival time)",
}


class TupleCoercion:
    """Checks tuples against one schema; call it once per tuple."""

    def __init__(self, schema: Schema, max_string_bytes: int = MAX_STRING_BYTES) -> None:
        self.schema = schema
        self.max_string_bytes = max_string_bytes
        kinds: dict[DataType, Callable[[Any], Any]] = {
            DataType.STRING: self._string,
            DataType.LONG: _long,
            DataType.DOUBLE: _double,
            DataType.BOOLEAN: _boolean,
            DataType.TIMESTAMP: _timestamp,
        }
        self._checks = {f.name: kinds[f.type] for f in schema.fields}

    def _string(self, value: Any) -> str:
        if not isinstance(value, str):
            raise ValueError(f"expected a string, got {value!r}")
        try:
            size = len(value.encode("utf-8"))
        except UnicodeEncodeError:
            raise ValueError("the string holds an unpaired surrogate (not UTF-8 text)") from None
        if size > self.max_string_bytes:
            raise ValueError(f"string longer than {self.max_string_bytes} bytes")
        return value

    def __call__(
        self, index: int, item: Any, arrival_us: int
    ) -> tuple[dict[str, Any] | None, list[TupleProblem]]:
        """``(values, [])`` for a good tuple, ``(None, problems)`` for a bad one."""
        if not isinstance(item, dict):
            return None, [
                TupleProblem(
                    index, None, f"a tuple must be an object of fields, got {type(item).__name__}"
                )
            ]
        problems = [
            TupleProblem(index, str(key), "no such field in the stream's schema")
            for key in item
            if key not in self._checks
        ]
        values: dict[str, Any] = {}
        for name, check in self._checks.items():
            value = item.get(name)
            if name not in item and name == self.schema.event_time:
                values[name] = arrival_us
            elif name not in item:
                problems.append(TupleProblem(index, name, "missing (every field is required)"))
            elif value is None:
                problems.append(TupleProblem(index, name, _NULL[name == self.schema.event_time]))
            else:
                try:
                    values[name] = check(value)
                except ValueError as exc:
                    problems.append(TupleProblem(index, name, str(exc)))
        return (None, problems) if problems else (values, [])
