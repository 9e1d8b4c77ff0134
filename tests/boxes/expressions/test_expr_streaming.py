"""A streaming query keeps running through tuples that would raise in ANSI mode."""

from __future__ import annotations

import json

from boxes.expressions import check_expression, check_predicate
from boxes.expressions.sqlvalues import LONG_MAX
from boxes.types import DataType, Field, Schema
from tests.boxes.expressions.reference.evaluate import evaluate

SCHEMA = Schema((Field("qty", DataType.LONG), Field("code", DataType.STRING)))
ROWS = [
    {"qty": 4, "code": "12"},
    {"qty": 0, "code": "abc"},  # division by zero, a code that is not a number
    {"qty": LONG_MAX, "code": "99999999999999999999"},  # overflow, a number too large
    {"qty": None, "code": None},
]
WHERE = "qty IS NULL OR qty >= 0"
FIELDS = {
    "per": "100 / qty",
    "doubled": "qty * 2",
    "code_number": "CAST(code AS long) + 1",
    "rest": "7 % qty",
}


def test_bad_values_become_null_and_the_query_finishes(spark, tmp_path):
    source = tmp_path / "in"
    source.mkdir()
    (source / "part.json").write_text("\n".join(json.dumps(r) for r in ROWS))
    where = check_predicate(WHERE, SCHEMA, "boxes.f.where")
    fields = {
        name: check_expression(text, SCHEMA, f"boxes.m.fields.{name}")
        for name, text in FIELDS.items()
    }
    stream = (
        spark.readStream.schema(SCHEMA.spark_type())
        .json(str(source))
        .where(where.to_column())
        .select(*[e.to_column().alias(name) for name, e in fields.items()])
    )
    query = (
        stream.writeStream.format("memory")
        .queryName("expr_bad_values")
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination()
        assert query.exception() is None
        got = sorted((tuple(r) for r in spark.table("expr_bad_values").collect()), key=repr)
    finally:
        query.stop()
    want = sorted(
        (tuple(evaluate(e, r) for e in fields.values()) for r in ROWS if evaluate(where, r)),
        key=repr,
    )
    assert got == want
    assert (None, 0, None, None) in got  # the zero divisor and the non-number, as NULLs
