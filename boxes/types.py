"""The data types and schemas that documents, the catalog and expressions share.

A schema is an ordered list of typed fields plus, optionally, the name of its event-time
field (a timestamp). Field names are plain identifiers that start with a letter, so no user
field can collide with the reserved label column or with the ``_sources``/``_output`` fields
added to results.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

import pyarrow as pa

from boxes import codes
from boxes.errors import Problem

FIELD_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
# Numbers written as text (CSV cells, query parameters): ASCII digits, a minus sign at most.
# int() and float() would also take other scripts' digits ('٥'), a plus sign, spaces,
# underscores, 'inf' and 'nan'.
_INTEGER_TEXT = re.compile(r"-?[0-9]+")
_NUMBER_TEXT = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def integer_text(text: str) -> int | None:
    """The integer ``text`` writes in ASCII digits, else None.

    >>> integer_text("-12"), integer_text("+5"), integer_text("٥"), integer_text(" 5")
    (-12, None, None, None)
    """
    return int(text) if _INTEGER_TEXT.fullmatch(text) else None


def number_text(text: str) -> float | None:
    """The finite number ``text`` writes in ASCII (``1.5``, ``-2e3``), else None.

    >>> number_text("1.5e3"), number_text("+1"), number_text("1_0"), number_text("1e999")
    (1500.0, None, None, None)
    """
    if not _NUMBER_TEXT.fullmatch(text):
        return None
    value = float(text)
    return value if value not in (float("inf"), float("-inf")) else None


class DataType(str, Enum):
    """A Sluice type; its value is the name schemas and results use. See ``TYPES``."""

    STRING = "string"
    LONG = "long"
    DOUBLE = "double"
    BOOLEAN = "boolean"
    TIMESTAMP = "timestamp"

    @property
    def is_numeric(self) -> bool:
        return self in (DataType.LONG, DataType.DOUBLE)

    @property
    def arrow(self) -> pa.DataType:
        return TYPES[self].arrow

    @property
    def ddl(self) -> str:
        return TYPES[self].ddl

    def spark_type(self):
        from pyspark.sql import types as T  # Spark is imported only where it is used.

        return getattr(T, TYPES[self].spark)()


@dataclass(frozen=True)
class TypeInfo:
    """Every representation of one type: the other tables derive from ``TYPES``."""

    spellings: tuple[str, ...]  # what a person may write in a schema or a cast, besides the name
    arrow: pa.DataType  # in the ingestion log's frames and in results
    ddl: str  # Spark SQL DDL (a source's row schema)
    spark: str  # the pyspark.sql.types class


TYPES: dict[DataType, TypeInfo] = {
    DataType.STRING: TypeInfo(("str", "text"), pa.string(), "STRING", "StringType"),
    DataType.LONG: TypeInfo(("int", "integer", "bigint"), pa.int64(), "BIGINT", "LongType"),
    DataType.DOUBLE: TypeInfo(("float", "real"), pa.float64(), "DOUBLE", "DoubleType"),
    DataType.BOOLEAN: TypeInfo(("bool",), pa.bool_(), "BOOLEAN", "BooleanType"),
    DataType.TIMESTAMP: TypeInfo((), pa.timestamp("us", tz="UTC"), "TIMESTAMP", "TimestampType"),
}
# Spellings a person may write for each type.
TYPE_ALIASES: dict[str, DataType] = {
    spelling: dtype for dtype, info in TYPES.items() for spelling in (dtype.value, *info.spellings)
}


@dataclass(frozen=True)
class Field:
    name: str
    type: DataType


@dataclass(frozen=True)
class Schema:
    fields: tuple[Field, ...]
    event_time: str | None = None

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    def get(self, name: str) -> Field | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None

    def type_of(self, name: str) -> DataType | None:
        f = self.get(name)
        return f.type if f else None

    def spark_type(self):
        from pyspark.sql import types as T

        return T.StructType([T.StructField(f.name, f.type.spark_type(), True) for f in self.fields])

    def arrow_schema(self) -> pa.Schema:
        return pa.schema([pa.field(f.name, f.type.arrow) for f in self.fields])

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"fields": {f.name: f.type.value for f in self.fields}}
        if self.event_time:
            out["event_time"] = self.event_time
        return out


def parse_schema(raw: Any, path: str) -> tuple[Schema | None, list[Problem]]:
    """Read ``{fields: {name: type, ...}, event_time: name}``; return the schema or the problems."""
    problems: list[Problem] = []
    if not isinstance(raw, Mapping):
        return None, [
            Problem(codes.SCHEMA_INVALID, path, "a schema must be a mapping with 'fields'")
        ]
    for key in raw:
        if key not in ("fields", "event_time"):
            problems.append(
                Problem(
                    codes.UNKNOWN_PARAMETER,
                    f"{path}.{key}",
                    f"unknown schema key {key!r}; expected 'fields' or 'event_time'",
                )
            )
    fields_raw = raw.get("fields")
    if not isinstance(fields_raw, Mapping) or not fields_raw:
        problems.append(
            Problem(
                codes.SCHEMA_INVALID,
                f"{path}.fields",
                "'fields' must be a non-empty mapping of field name to type",
            )
        )
        return None, problems
    fields: list[Field] = []
    for name, type_name in fields_raw.items():
        fpath = f"{path}.fields.{name}"
        if not isinstance(name, str) or not FIELD_NAME.match(name):
            problems.append(
                Problem(
                    codes.INVALID_NAME,
                    fpath,
                    f"field name {name!r} must start with a letter and contain only "
                    "letters, digits and '_' (at most 64 characters)",
                )
            )
            continue
        dtype = TYPE_ALIASES.get(type_name.lower()) if isinstance(type_name, str) else None
        if dtype is None:
            problems.append(
                Problem(
                    codes.UNKNOWN_TYPE,
                    fpath,
                    f"unknown type {type_name!r}; expected one of "
                    + ", ".join(t.value for t in DataType),
                )
            )
            continue
        fields.append(Field(name, dtype))
    event_time = raw.get("event_time")
    if event_time is not None:
        match = next((f for f in fields if f.name == event_time), None)
        if match is None:
            problems.append(
                Problem(
                    codes.UNKNOWN_FIELD,
                    f"{path}.event_time",
                    f"event_time names {event_time!r}, which is not a field",
                )
            )
        elif match.type is not DataType.TIMESTAMP:
            problems.append(
                Problem(
                    codes.TYPE_MISMATCH,
                    f"{path}.event_time",
                    f"event_time field {event_time!r} must be a timestamp, not {match.type.value}",
                )
            )
    if problems:
        return None, problems
    return Schema(tuple(fields), event_time), []
