"""Check a batch of tuples against its stream's schema and encode it as one Arrow IPC frame.

All or nothing: every bad tuple is reported (index, field, reason) and none is accepted.
Every field is required except the event-time field, which defaults to the arrival time.
Timestamps are ISO-8601 strings (UTC unless they say otherwise), ``datetime`` objects or
seconds since the epoch.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable

import pyarrow as pa

from boxes import codes
from boxes.errors import InvalidInput, TooLarge
from boxes.types import DataType, Schema

MAX_REPORTED = 100
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1
ARROW_TYPES = {
    DataType.STRING: pa.string(),
    DataType.LONG: pa.int64(),
    DataType.DOUBLE: pa.float64(),
    DataType.BOOLEAN: pa.bool_(),
    DataType.TIMESTAMP: pa.timestamp("us", tz="UTC"),
}


@dataclass(frozen=True)
class Limits:
    """What one append may carry; larger batches are refused, not split."""

    max_tuples: int = 10_000
    max_bytes: int = 8 << 20
    max_string_bytes: int = 64 << 10


def arrow_schema(schema: Schema) -> pa.Schema:
    return pa.schema([pa.field(f.name, ARROW_TYPES[f.type]) for f in schema.fields])


def _micros(dt: datetime) -> int:
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return int(dt.timestamp()) * 1_000_000 + dt.microsecond


def _timestamp(value: Any) -> int:
    if isinstance(value, datetime):
        return _micros(value)
    if isinstance(value, str):
        try:
            return _micros(datetime.fromisoformat(value))
        except ValueError:
            raise ValueError(f"expected an ISO-8601 timestamp, got {value!r}") from None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return round(value * 1_000_000)
    raise ValueError(f"expected a timestamp (ISO-8601 string or epoch seconds), got {value!r}")


def _checker(dtype: DataType, limits: Limits) -> Callable[[Any], Any]:
    def string(v):
        if not isinstance(v, str):
            raise ValueError(f"expected a string, got {v!r}")
        if len(v.encode("utf-8", "surrogatepass")) > limits.max_string_bytes:
            raise ValueError(f"string longer than {limits.max_string_bytes} bytes")
        return v

    def long(v):
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"expected an integer, got {v!r}")
        if not LONG_MIN <= v <= LONG_MAX:
            raise ValueError(f"integer {v} does not fit in 64 bits")
        return v

    def double(v):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"expected a finite number, got {v!r}")
        return float(v)

    def boolean(v):
        if not isinstance(v, bool):
            raise ValueError(f"expected true or false, got {v!r}")
        return v

    return {DataType.STRING: string, DataType.LONG: long, DataType.DOUBLE: double,
            DataType.BOOLEAN: boolean, DataType.TIMESTAMP: _timestamp}[dtype]


def encode(stream: str, schema: Schema, tuples: Any, arrival: datetime,
           limits: Limits = Limits()) -> tuple[int, bytes]:
    """Return ``(row count, Arrow IPC bytes)`` or raise ``InvalidInput`` naming every bad tuple."""
    if not isinstance(tuples, (list, tuple)):
        raise InvalidInput(f"stream {stream!r}: expected a list of tuples", code=codes.BATCH_INVALID)
    if not tuples:
        raise InvalidInput(f"stream {stream!r}: the batch is empty", code=codes.BATCH_INVALID)
    if len(tuples) > limits.max_tuples:
        raise TooLarge(
            f"stream {stream!r}: {len(tuples)} tuples in one batch; at most {limits.max_tuples}",
            code=codes.BATCH_TOO_LARGE,
            details={"tuples": len(tuples), "max_tuples": limits.max_tuples})
    checkers = {f.name: _checker(f.type, limits) for f in schema.fields}
    columns: dict[str, list] = {name: [] for name in checkers}
    arrival_us = _micros(arrival)
    errors: list[dict[str, Any]] = []
    for index, item in enumerate(tuples):
        bad = _check_tuple(index, item, schema, checkers, columns, arrival_us)
        errors.extend(bad)
    if errors:
        bad_count = len({e["index"] for e in errors})
        shown = "; ".join(
            f"tuple {e['index']}" + (f" field {e['field']!r}" if e["field"] else "") + f": {e['reason']}"
            for e in errors[:3])
        raise InvalidInput(
            f"stream {stream!r}: {bad_count} of {len(tuples)} tuples are invalid and none was "
            f"accepted ({shown})",
            code=codes.TUPLE_INVALID,
            details={"stream": stream, "invalid": bad_count, "errors": errors[:MAX_REPORTED]})
    table = pa.Table.from_pydict(columns, schema=arrow_schema(schema))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    payload = sink.getvalue().to_pybytes()
    if len(payload) > limits.max_bytes:
        raise TooLarge(
            f"stream {stream!r}: the batch takes {len(payload)} bytes; at most {limits.max_bytes}",
            code=codes.BATCH_TOO_LARGE, details={"bytes": len(payload), "max_bytes": limits.max_bytes})
    return len(tuples), payload


def _check_tuple(index, item, schema, checkers, columns, arrival_us) -> list[dict[str, Any]]:
    if not isinstance(item, dict):
        return [{"index": index, "field": None,
                 "reason": f"a tuple must be an object of fields, got {type(item).__name__}"}]
    errors = [{"index": index, "field": str(key), "reason": "no such field in the stream's schema"}
              for key in item if key not in checkers]
    values = {}
    for name, check in checkers.items():
        value = item.get(name)
        if value is None and name == schema.event_time:
            values[name] = arrival_us
            continue
        if value is None:
            errors.append({"index": index, "field": name, "reason": "missing (every field is required)"})
            continue
        try:
            values[name] = check(value)
        except ValueError as exc:
            errors.append({"index": index, "field": name, "reason": str(exc)})
    if not errors:
        for name, value in values.items():
            columns[name].append(value)
    return errors
