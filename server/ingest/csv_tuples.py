"""Tuples from CSV text (RFC 4180, read by Python's ``csv`` module): a header row naming the
stream's fields, then one tuple a row.

CSV has only text, so each cell is read as its field's type says (an integer, a number,
``true``/``false``, a timestamp as ISO-8601 text or epoch seconds, text) before the one tuple
coercion (``server.ingest.tuples``) judges it like any JSON tuple: a cell that does not read
as its type stays text, and the coercion names the field and the tuple. An empty cell leaves
its field out (the event-time field then takes the arrival time; any other field is missing).

>>> from boxes.types import parse_schema
>>> schema = parse_schema({"fields": {"n": "long", "ok": "boolean", "s": "string"}}, "x")[0]
>>> read_csv(b'n,ok,s\\n1,true,"a, b"\\n', schema)
[{'n': 1, 'ok': True, 's': 'a, b'}]
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Callable
from typing import Any

from boxes import codes
from boxes.errors import InvalidInput
from boxes.types import DataType, Schema

_INTEGER = re.compile(r"[+-]?\d+")


def _integer(text: str) -> Any:
    return int(text) if _INTEGER.fullmatch(text) else text


def _number(text: str) -> Any:
    try:
        value = float(text)
    except ValueError:
        return text
    return value if math.isfinite(value) else text


def _boolean(text: str) -> Any:
    return {"true": True, "false": False}.get(text.lower(), text)


def _time(text: str) -> Any:
    value = _number(text)
    return value if isinstance(value, float) else text


READERS: dict[DataType, Callable[[str], Any]] = {
    DataType.STRING: str,
    DataType.LONG: _integer,
    DataType.DOUBLE: _number,
    DataType.BOOLEAN: _boolean,
    DataType.TIMESTAMP: _time,
}


def read_csv(raw: bytes, schema: Schema) -> list[dict[str, Any]]:
    """The tuples of a CSV body; ``BAD_CSV`` names the line of a structural problem."""
    try:
        text = raw.decode("utf-8-sig")  # a spreadsheet's byte-order mark is not a field name
    except UnicodeDecodeError:
        raise InvalidInput(code=codes.BAD_CSV, line=1, reason="it is not UTF-8 text") from None
    rows = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(rows, None)
        if not header:
            raise InvalidInput(code=codes.BAD_CSV, line=1, reason="there is no header row")
        types = {f.name: f.type for f in schema.fields}
        readers = [READERS[types[name]] if name in types else str for name in header]
        tuples = []
        for row in rows:
            if not row:
                continue  # a blank line
            if len(row) != len(header):
                raise InvalidInput(
                    code=codes.BAD_CSV,
                    line=rows.line_num,
                    reason=f"{len(row)} cells where the header has {len(header)}",
                )
            cells = zip(header, readers, row, strict=True)
            tuples.append({name: read(cell) for name, read, cell in cells if cell != ""})
    except csv.Error as err:
        raise InvalidInput(code=codes.BAD_CSV, line=rows.line_num, reason=str(err)) from None
    return tuples
