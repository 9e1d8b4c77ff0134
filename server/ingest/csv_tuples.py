"""Tuples from CSV text (RFC 4180, read by Python's ``csv`` module): a header row naming the
stream's fields, then one tuple a row.

CSV has only text, so each cell is read as its field's type says (an integer or a number in
ASCII digits, ``true``/``false``, a timestamp as ISO-8601 text or epoch seconds, text; a header
names each field once) before the one tuple
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
from collections.abc import Callable
from typing import Any

from boxes import codes
from boxes.errors import InvalidInput
from boxes.types import DataType, Schema, integer_text, number_text


def _integer(text: str) -> Any:
    value = integer_text(text)
    return text if value is None else value


def _number(text: str) -> Any:
    value = number_text(text)
    return text if value is None else value


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
        twice = sorted({name for name in header if header.count(name) > 1})
        if twice:  # a row would give the field two values, and the last would win unseen
            raise InvalidInput(
                code=codes.BAD_CSV, line=1, reason=f"the header names {twice[0]!r} twice"
            )
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
