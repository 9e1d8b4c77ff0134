"""The one type table: each type's Arrow, DDL and Spark forms agree, as real Spark reads them."""

from __future__ import annotations

import pyarrow as pa
import pytest

from boxes.types import TYPE_ALIASES, TYPES, DataType, parse_schema

SCHEMA = parse_schema({"fields": {f"f_{t.value}": t.value for t in DataType}}, "all")[0]


def test_every_type_has_every_representation():
    assert set(TYPES) == set(DataType)


@pytest.mark.parametrize("dtype", list(DataType), ids=lambda t: t.value)
def test_the_ddl_the_arrow_type_and_the_spark_type_are_one_type(spark, dtype):
    from_ddl = spark.createDataFrame([], f"x {dtype.ddl}").schema["x"].dataType
    from_arrow = (
        spark.createDataFrame(pa.table({"x": pa.array([], dtype.arrow)})).schema["x"].dataType
    )
    assert from_ddl == from_arrow == dtype.spark_type()


def test_a_schema_is_the_same_in_arrow_and_in_spark(spark):
    table = pa.Table.from_pylist([], schema=SCHEMA.arrow_schema())
    assert spark.createDataFrame(table).schema == SCHEMA.spark_type()


@pytest.mark.parametrize(
    "spelling, dtype",
    [
        ("string", DataType.STRING),
        ("TEXT", DataType.STRING),
        ("bigint", DataType.LONG),
        ("int", DataType.LONG),
        ("real", DataType.DOUBLE),
        ("bool", DataType.BOOLEAN),
        ("timestamp", DataType.TIMESTAMP),
    ],
)
def test_a_schema_may_spell_a_type_several_ways(spelling, dtype):
    assert parse_schema({"fields": {"x": spelling}}, "s")[0].type_of("x") is dtype


def test_every_type_name_is_a_spelling_of_itself():
    assert all(TYPE_ALIASES[t.value] is t for t in DataType)
