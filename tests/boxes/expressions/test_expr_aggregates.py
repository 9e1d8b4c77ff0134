"""Aggregates: Spark's grouped results equal the Python reference, NULLs skipped, overflow NULL."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from boxes.expressions import check_aggregate
from boxes.expressions.sqlvalues import LONG_MAX
from boxes.types import DataType, Field, Schema
from tests.boxes.expressions.reference.evaluate import aggregate

SCHEMA = Schema(
    (
        Field("key", DataType.STRING),
        Field("qty", DataType.LONG),
        Field("price", DataType.DOUBLE),
        Field("time", DataType.TIMESTAMP),
    )
)
ROWS = [
    {"key": "a", "qty": 1, "price": 2.5, "time": datetime(2024, 1, 1)},
    {"key": "a", "qty": None, "price": 4.0, "time": None},
    {"key": "a", "qty": 3, "price": None, "time": datetime(2024, 1, 3)},
    {"key": "big", "qty": LONG_MAX, "price": 1.0, "time": None},
    {"key": "big", "qty": 1, "price": 1.0, "time": None},
    {"key": "nulls", "qty": None, "price": None, "time": None},
]
TEXTS = [
    "count()",
    "count(qty)",
    "sum(qty)",
    "sum(price * qty)",
    "avg(qty)",
    "avg(price)",
    "min(price)",
    "max(time)",
    "max(upper(key))",
    "min(qty % 2)",
]
EXPECTED = {  # by key, in TEXTS order
    "a": [3, 2, 4, 2.5, 2.0, 3.25, 2.5, datetime(2024, 1, 3), "A", 1],
    "big": [2, 2, None, 9.223372036854776e18, 4.611686018427388e18, 1.0, 1.0, None, "BIG", 1],
    "nulls": [1, 0, None, None, None, None, None, None, "NULLS", None],
}


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_python_reference(key):
    group = [r for r in ROWS if r["key"] == key]
    got = [aggregate(check_aggregate(text, SCHEMA, "a"), group) for text in TEXTS]
    assert got == EXPECTED[key]


def test_spark_matches_the_reference_per_group(spark):
    checked = [check_aggregate(text, SCHEMA, "a") for text in TEXTS]
    frame = spark.createDataFrame(
        [tuple(_aware(r[f.name]) for f in SCHEMA.fields) for r in ROWS], SCHEMA.spark_type()
    )
    grouped = frame.groupBy("key").agg(
        *[c.to_column().alias(f"a{i}") for i, c in enumerate(checked)]
    )
    got = {row["key"]: [_utc(row[f"a{i}"]) for i in range(len(TEXTS))] for row in grouped.collect()}
    assert got == EXPECTED


def test_result_types_are_the_declared_ones(spark):
    checked = [check_aggregate(text, SCHEMA, "a") for text in TEXTS]
    frame = spark.createDataFrame([], SCHEMA.spark_type())
    fields = frame.agg(*[c.to_column().alias(f"a{i}") for i, c in enumerate(checked)]).schema
    assert [f.dataType for f in fields] == [c.type.spark_type() for c in checked]


def _aware(value):
    return value.replace(tzinfo=timezone.utc) if isinstance(value, datetime) else value


def _utc(value):
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).replace(tzinfo=None)
    return value
