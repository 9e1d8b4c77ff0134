"""Checking: result types, fields read, and error messages that say what was expected."""

from __future__ import annotations

import pytest

from boxes import codes
from boxes.errors import DiagramInvalid
from boxes.expressions import check_aggregate, check_expression, check_predicate
from boxes.types import DataType, Field, Schema

L, D, S, B, T = (
    DataType.LONG,
    DataType.DOUBLE,
    DataType.STRING,
    DataType.BOOLEAN,
    DataType.TIMESTAMP,
)
SCHEMA = Schema(
    (
        Field("price", D),
        Field("qty", L),
        Field("symbol", S),
        Field("time", T),
        Field("ok", B),
        Field("left_price", D),
    ),
    event_time="time",
)

TYPED = [
    ("price * 2", D, {"price"}),
    ("qty + 1", L, {"qty"}),
    ("qty / 2", D, {"qty"}),
    ("qty % 3", L, {"qty"}),
    ("-qty", L, {"qty"}),
    ("1e3", D, set()),
    ("price > 10 AND symbol = 'A' OR NOT ok", B, {"price", "symbol", "ok"}),
    ("price > 10 and symbol <> 'A' Or not ok", B, {"price", "symbol", "ok"}),
    ("symbol LIKE 'A%'", B, {"symbol"}),
    ("qty IN (1, 2, 3)", B, {"qty"}),
    ("price BETWEEN 1 AND qty", B, {"price", "qty"}),
    ("CASE WHEN ok THEN qty ELSE price END", D, {"ok", "qty", "price"}),
    ("CASE symbol WHEN 'a' THEN 'x' END", S, {"symbol"}),
    ("CAST(symbol AS int)", L, {"symbol"}),
    ("cast(qty as TEXT)", S, {"qty"}),
    ("time + INTERVAL 5 SECONDS", T, {"time"}),
    ("UPPER(symbol)", S, {"symbol"}),
    ("date_trunc('HOUR', time)", T, {"time"}),
    ("unix_timestamp(time)", L, {"time"}),
    ("coalesce(qty, 0)", L, {"qty"}),
    ("greatest(qty, price, 0)", D, {"qty", "price"}),
    ("TIMESTAMP '2024-01-01 10:00:00' < time", B, {"time"}),
    ("symbol IS NULL", B, {"symbol"}),
    ("power(price, 2)", D, {"price"}),
    ("substr(symbol, 1, 2)", S, {"symbol"}),
    ("left_price - price", D, {"left_price", "price"}),
    ("CAST(NULL AS long)", L, set()),
    ("coalesce(NULL, symbol)", S, {"symbol"}),
]


@pytest.mark.parametrize("text, kind, fields", TYPED, ids=[t for t, _, _ in TYPED])
def test_type_and_fields(text, kind, fields):
    checked = check_expression(text, SCHEMA, "boxes.m.fields.x")
    assert (checked.type, checked.fields, checked.text) == (kind, frozenset(fields), text)


MESSAGES = [
    ("price * 2 AND ok", codes.TYPE_MISMATCH, "AND needs boolean operands; got double (price * 2)"),
    ("symbol + 1", codes.TYPE_MISMATCH, "+ needs numeric operands; got string and long"),
    ("symbol = 1", codes.TYPE_MISMATCH, "= compares values of different types: string, long"),
    ("time > '2024-01-01'", codes.TYPE_MISMATCH, "write a timestamp as TIMESTAMP 'YYYY-MM-DD"),
    ("lower(qty)", codes.TYPE_MISMATCH, "lower() expects string for argument 1; got long (qty)"),
    ("CASE WHEN ok THEN 'a' ELSE 1 END", codes.TYPE_MISMATCH, "CASE branches must share a type"),
    ("CASE WHEN qty THEN 1 END", codes.TYPE_MISMATCH, "WHEN needs a boolean condition; got long"),
    ("qty LIKE 'a%'", codes.TYPE_MISMATCH, "LIKE needs a string; got long (qty)"),
    ("CAST(ok AS timestamp)", codes.TYPE_MISMATCH, "cannot cast boolean to timestamp"),
    ("qty + INTERVAL 1 SECOND", codes.TYPE_MISMATCH, "an INTERVAL can only move a timestamp"),
    ("INTERVAL 1 SECOND", codes.TYPE_MISMATCH, "can only be added to or subtracted from"),
    ("NULL", codes.TYPE_MISMATCH, "CAST(NULL AS type)"),
    ("time + INTERVAL 1 MONTH", codes.INVALID_LITERAL, "unknown INTERVAL unit 'MONTH'"),
    ("round(price, qty)", codes.INVALID_LITERAL, "round() needs a literal number of digits"),
    ("date_trunc('fortnight', time)", codes.INVALID_LITERAL, "date_trunc needs a literal unit"),
    ("symbol LIKE symbol", codes.INVALID_LITERAL, "LIKE needs a literal 'pattern'"),
    ("TIMESTAMP '2024-13-01'", codes.INVALID_LITERAL, "is not a timestamp"),
    ("Price > 1", codes.UNKNOWN_FIELD, "unknown field 'Price'; did you mean 'price'"),
    ("symbl = 'a'", codes.UNKNOWN_FIELD, "did you mean 'symbol'"),
    ("uper(symbol)", codes.UNKNOWN_FUNCTION, "unknown function uper(); did you mean 'upper'"),
    ("substring(symbol)", codes.ARITY, "substring() takes 2 to 3 arguments; got 1"),
    ("coalesce()", codes.ARITY, "coalesce() takes at least 1 argument; got 0"),
    ("price > ", codes.EXPR_SYNTAX, "unexpected the end of the text; expected"),
    ("price >> 1", codes.EXPR_SYNTAX, "unexpected '>' at column 8"),
    ("'open", codes.EXPR_SYNTAX, "unterminated string"),
    ("", codes.EXPR_SYNTAX, "the expression is empty"),
    ("count(qty) > 1", codes.AGGREGATE_NOT_ALLOWED, "aggregates belong in an aggregate box"),
]


@pytest.mark.parametrize("text, code, fragment", MESSAGES, ids=[m[0] for m in MESSAGES])
def test_error_says_what_was_expected_and_found(text, code, fragment):
    with pytest.raises(DiagramInvalid) as caught:
        check_expression(text, SCHEMA, "boxes.f.where")
    (problem,) = caught.value.problems
    assert (problem.code, problem.path) == (code, "boxes.f.where")
    assert fragment in problem.message
    assert str(problem).startswith(f"[{code}] boxes.f.where: ")


def test_every_problem_is_reported_at_once():
    with pytest.raises(DiagramInvalid) as caught:
        check_expression("pricee > 1 AND lower(qty) = 'x' AND _label = 1 AND nope(1)", SCHEMA, "p")
    assert caught.value.codes == [
        codes.UNKNOWN_FIELD,
        codes.TYPE_MISMATCH,
        codes.LABEL_REFERENCE,
        codes.UNKNOWN_FUNCTION,
    ]


def test_a_non_string_is_a_syntax_error():
    with pytest.raises(DiagramInvalid) as caught:
        check_expression(42, SCHEMA, "p")
    assert caught.value.codes == [codes.EXPR_SYNTAX]


def test_a_predicate_must_be_boolean():
    assert check_predicate("qty > 1", SCHEMA, "p").type is B
    with pytest.raises(DiagramInvalid) as caught:
        check_predicate("qty + 1", SCHEMA, "boxes.f.where")
    assert caught.value.codes == [codes.TYPE_MISMATCH]
    assert "a condition must be boolean; got long" in caught.value.problems[0].message


AGGREGATES = [
    ("count()", "count", L, None),
    ("COUNT(symbol)", "count", L, S),
    ("sum(qty)", "sum", L, L),
    ("sum(price * qty)", "sum", D, D),
    ("avg(qty)", "avg", D, L),
    ("min(symbol)", "min", S, S),
    ("max(time)", "max", T, T),
]


@pytest.mark.parametrize("text, function, kind, argument", AGGREGATES)
def test_aggregate_types(text, function, kind, argument):
    checked = check_aggregate(text, SCHEMA, "boxes.a.aggregates.x")
    assert (checked.function, checked.type) == (function, kind)
    assert (checked.argument.type if checked.argument else None) == argument


def test_aggregate_reads_its_argument_fields():
    checked = check_aggregate("sum(price * qty)", SCHEMA, "p")
    assert checked.fields == {"price", "qty"}
    assert checked.argument.text == "price * qty"


def test_timestamp_minus_timestamp_is_the_seconds_between_them():
    from boxes.expressions import check_expression
    from boxes.types import DataType, Field, Schema

    schema = Schema((Field("a", DataType.TIMESTAMP), Field("b", DataType.TIMESTAMP)), None)
    assert check_expression("a - b", schema, "x").type is DataType.DOUBLE
    assert (
        check_expression("a - TIMESTAMP '2024-01-01 00:00:00'", schema, "x").type is DataType.DOUBLE
    )
