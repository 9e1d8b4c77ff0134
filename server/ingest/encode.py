"""Check a batch of tuples against its stream's schema and encode it as one Arrow IPC frame.

All or nothing: every bad tuple is reported (index, field, reason) and none is accepted.
What a tuple may hold is ``server.ingest.tuples``' rule, which ``sluice run`` shares.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pyarrow as pa

from boxes import codes
from boxes.arrowipc import ipc_bytes
from boxes.errors import InvalidInput, TooLarge
from boxes.levels import LEVEL_COLUMN, signed
from boxes.types import Schema
from catalog.clearance import PUBLIC_ONLY, UNSTATED, Admission
from server.ingest.tuples import MAX_STRING_BYTES, TupleCoercion, micros

MAX_REPORTED = 100


@dataclass(frozen=True)
class Limits:
    """What one append may carry; larger batches are refused, not split."""

    max_tuples: int = 10_000
    max_bytes: int = 8 << 20
    max_string_bytes: int = MAX_STRING_BYTES


def encode(
    stream: str,
    schema: Schema,
    tuples: Any,
    arrival: datetime,
    limits: Limits = Limits(),
    level: Admission = PUBLIC_ONLY,
) -> tuple[int, bytes]:
    """Return ``(row count, Arrow IPC bytes)`` or raise ``InvalidInput`` naming every bad tuple.

    Each tuple's Chinese-Wall level label (``boxes/levels.py``), which ``level`` decides from
    its ``_level`` field or its absence, becomes a ``_level`` column after the schema's; a
    batch of public tuples has none (the reader reads 0)."""
    table = encode_table(stream, schema, tuples, arrival, limits, level)
    return table.num_rows, to_payload(stream, table, limits)


def encode_table(
    stream: str,
    schema: Schema,
    tuples: Any,
    arrival: datetime,
    limits: Limits = Limits(),
    level: Admission = PUBLIC_ONLY,
) -> pa.Table:
    """The checked batch as a table (``encode`` without the bytes): a governed stream's gets
    its policy columns at the log's writer before it is written (``punctuated.py``)."""
    if not isinstance(tuples, (list, tuple)):
        raise InvalidInput(
            f"stream {stream!r}: expected a list of tuples", code=codes.BATCH_INVALID
        )
    if not tuples:
        raise InvalidInput(f"stream {stream!r}: the batch is empty", code=codes.BATCH_INVALID)
    if len(tuples) > limits.max_tuples:
        raise TooLarge(
            f"stream {stream!r}: {len(tuples)} tuples in one batch; at most {limits.max_tuples}",
            code=codes.BATCH_TOO_LARGE,
            details={"tuples": len(tuples), "max_tuples": limits.max_tuples},
        )
    coerce = TupleCoercion(schema, limits.max_string_bytes)
    columns: dict[str, list] = {name: [] for name in schema.names}
    arrival_us = micros(arrival)
    errors: list[dict[str, Any]] = []
    levels = []
    for index, item in enumerate(tuples):
        if isinstance(item, dict):  # anything else is not a tuple, as the coercion says
            stated = item.get(LEVEL_COLUMN, UNSTATED)
            levels.append(level.level(index, stated))
            if stated is not UNSTATED:
                item = {k: v for k, v in item.items() if k != LEVEL_COLUMN}
        values, problems = coerce(index, item, arrival_us)
        errors.extend(p.to_dict() for p in problems)
        for name, value in (values or {}).items():
            columns[name].append(value)
    if errors:
        bad_count = len({e["index"] for e in errors})
        shown = "; ".join(
            f"tuple {e['index']}"
            + (f" field {e['field']!r}" if e["field"] else "")
            + f": {e['reason']}"
            for e in errors[:3]
        )
        raise InvalidInput(
            f"stream {stream!r}: {bad_count} of {len(tuples)} tuples are invalid and none was "
            f"accepted ({shown})",
            code=codes.TUPLE_INVALID,
            details={"stream": stream, "invalid": bad_count, "errors": errors[:MAX_REPORTED]},
        )
    table = pa.Table.from_pydict(columns, schema=schema.arrow_schema())
    if any(levels):
        column = pa.array([signed(label) for label in levels], pa.int64())
        table = table.append_column(LEVEL_COLUMN, column)
    return table


def to_payload(stream: str, table: pa.Table, limits: Limits = Limits()) -> bytes:
    """A table as one frame's Arrow IPC bytes, refused above ``limits.max_bytes``."""
    payload = ipc_bytes(table)
    if len(payload) > limits.max_bytes:
        raise TooLarge(
            f"stream {stream!r}: the batch takes {len(payload)} bytes; at most {limits.max_bytes}",
            code=codes.BATCH_TOO_LARGE,
            details={"bytes": len(payload), "max_bytes": limits.max_bytes},
        )
    return payload
