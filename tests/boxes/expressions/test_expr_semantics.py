"""The language's semantics, case by case: each case's expected value is checked against the
Python reference and against real Spark (one select for the whole table).

Many cases are values that would raise in Spark's ANSI mode (overflow, division by zero,
strings that do not convert): here they must come out as NULL, not as a failed query.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest

from boxes.expressions import check_expression
from boxes.expressions.sqlvalues import LONG_MAX, LONG_MIN
from boxes.types import DataType, Field, Schema
from tests.boxes.expressions.reference.evaluate import evaluate

SCHEMA = Schema(
    (
        Field("a", DataType.BOOLEAN),
        Field("b", DataType.BOOLEAN),
        Field("n", DataType.LONG),
        Field("m", DataType.LONG),
        Field("x", DataType.DOUBLE),
        Field("s", DataType.STRING),
        Field("t", DataType.TIMESTAMP),
    )
)
NAN = float("nan")
T0 = datetime(2024, 5, 17, 13, 45, 30, 250000)  # a Friday
_ = None

# (expression, row values for the fields it reads, expected value)
CASES = [
    # three-valued logic
    *[
        (f"a {op} b", {"a": left, "b": right}, want)
        for op, table in (
            (
                "AND",
                {
                    (True, True): True,
                    (True, False): False,
                    (True, _): _,
                    (False, False): False,
                    (False, _): False,
                    (_, _): _,
                },
            ),
            (
                "OR",
                {
                    (True, True): True,
                    (True, False): True,
                    (True, _): True,
                    (False, False): False,
                    (False, _): _,
                    (_, _): _,
                },
            ),
        )
        for (left, right), want in table.items()
    ],
    ("NOT a", {"a": _}, _),
    ("NOT a", {"a": False}, True),
    # arithmetic and NULL propagation
    ("n + 1", {"n": _}, _),
    ("n / 2", {"n": 7}, 3.5),
    ("n / m", {"n": 1, "m": 0}, _),
    ("x / 0", {"x": 1.5}, _),
    ("n % m", {"n": -7, "m": 3}, -1),
    ("n % m", {"n": 7, "m": -3}, 1),
    ("n % 0", {"n": 7}, _),
    ("x % 2", {"x": -7.5}, -1.5),
    ("n + 1", {"n": LONG_MAX}, _),
    ("n * 2", {"n": LONG_MIN}, _),
    ("-n", {"n": LONG_MIN}, _),
    ("n - 1", {"n": LONG_MIN + 1}, LONG_MIN),
    ("n + x", {"n": 1, "x": 0.5}, 1.5),
    ("-9223372036854775808", {}, LONG_MIN),
    ("2 + 3 * 4 - 10 / 4", {}, 11.5),
    # comparisons, IN, BETWEEN
    ("n = x", {"n": 2, "x": 2.0}, True),
    ("x = x", {"x": NAN}, True),
    ("x > 1e308", {"x": NAN}, True),
    ("n <> m", {"n": 1, "m": _}, _),
    ("n <=> m", {"n": _, "m": _}, True),
    ("s < 'b'", {"s": "abc"}, True),
    ("t > TIMESTAMP '2024-01-01'", {"t": T0}, True),
    ("n IN (1, 2, 3)", {"n": 2}, True),
    ("n IN (1, NULL)", {"n": 2}, _),
    ("n IN (1, NULL)", {"n": 1}, True),
    ("n NOT IN (1, NULL)", {"n": 2}, _),
    ("n NOT IN (1, 3)", {"n": 2}, True),
    ("n IN (1.5, 2)", {"n": 2}, True),
    ("x BETWEEN 1 AND 2", {"x": 2.0}, True),
    ("x NOT BETWEEN 1 AND 2", {"x": 0.5}, True),
    ("x BETWEEN NULL AND 2", {"x": 3.0}, False),
    # LIKE
    ("s LIKE 'a%'", {"s": "abc"}, True),
    ("s LIKE 'A%'", {"s": "abc"}, False),
    ("s LIKE '_b_'", {"s": "abc"}, True),
    ("s LIKE 'a\\%'", {"s": "a%"}, True),
    ("s LIKE 'a\\%'", {"s": "ab"}, False),
    ("s LIKE 'a\\_c'", {"s": "abc"}, False),
    ("s LIKE '%\\\\%'", {"s": "back\\slash"}, True),
    ("s LIKE 'a%z'", {"s": "a\nz"}, True),
    ("s LIKE '.*'", {"s": "abc"}, False),
    ("s NOT LIKE '%b%'", {"s": _}, _),
    # CASE and null tests
    ("CASE WHEN n > 1 THEN 'big' WHEN n > 0 THEN 'small' END", {"n": 1}, "small"),
    ("CASE WHEN n > 1 THEN 'big' END", {"n": 0}, _),
    ("CASE WHEN a THEN 1 ELSE 2 END", {"a": _}, 2),
    ("CASE n WHEN 1 THEN x ELSE 0 END", {"n": 1, "x": 2.5}, 2.5),
    ("CASE n WHEN NULL THEN 1 ELSE 0 END", {"n": _}, 0),
    ("s IS NULL", {"s": _}, True),
    ("s IS NOT NULL", {"s": ""}, True),
    ("'it''s'", {}, "it's"),
    # casts that do and do not convert
    ("CAST(s AS long)", {"s": " 12 "}, 12),
    ("CAST(s AS long)", {"s": "1.5"}, _),
    ("CAST(s AS long)", {"s": "abc"}, _),
    ("CAST(s AS long)", {"s": "99999999999999999999"}, _),
    ("CAST(s AS double)", {"s": "1e3"}, 1000.0),
    ("CAST(s AS double)", {"s": "abc"}, _),
    ("CAST(s AS double)", {"s": " 1.5d "}, 1.5),
    ("CAST(s AS double)", {"s": "-Infinity"}, float("-inf")),
    ("CAST(s AS long)", {"s": "\u0661\u0662"}, _),
    ("CAST(s AS boolean)", {"s": " Yes "}, True),
    ("CAST(s AS boolean)", {"s": "maybe"}, _),
    (
        "CAST(s AS timestamp)",
        {"s": "2024-01-02T03:04:05.123Z"},
        datetime(2024, 1, 2, 3, 4, 5, 123000),
    ),
    ("CAST(s AS timestamp)", {"s": "2024-01-02 05:04:05+02:00"}, datetime(2024, 1, 2, 3, 4, 5)),
    ("CAST(s AS timestamp)", {"s": "+2024-01-02 03:04:05 UTC"}, datetime(2024, 1, 2, 3, 4, 5)),
    (
        "CAST(s AS timestamp)",
        {"s": "2024-01-02T03:04:05.123+01"},
        datetime(2024, 1, 2, 2, 4, 5, 123000),
    ),
    ("CAST(s AS timestamp)", {"s": "2024-01-02 03:04:05+18:30"}, _),
    ("CAST(s AS timestamp)", {"s": "Europe/Paris"}, _),
    ("CAST(s AS timestamp)", {"s": "12:30"}, _),
    # a zone only after the seconds, as Spark reads it
    ("CAST(s AS timestamp)", {"s": "+2024-01-02 UTC"}, _),
    ("CAST(s AS timestamp)", {"s": "2024-01-02T01:02Z"}, _),
    ("CAST(s AS timestamp)", {"s": "2024-01-02 01"}, datetime(2024, 1, 2, 1)),
    ("CAST(s AS timestamp)", {"s": "2024-01-02 01:02:03UTC"}, datetime(2024, 1, 2, 1, 2, 3)),
    ("CAST(s AS timestamp)", {"s": "not a time"}, _),
    ("CAST(x AS long)", {"x": -2.9}, -2),
    ("CAST(x AS long)", {"x": 1e19}, _),
    ("CAST(x AS long)", {"x": NAN}, _),
    ("CAST(x AS string)", {"x": 1.0}, "1.0"),
    ("CAST(x AS string)", {"x": 0.0001}, "1.0E-4"),
    ("CAST(x AS string)", {"x": 12345678.9}, "1.23456789E7"),
    ("CAST(x AS string)", {"x": -0.5}, "-0.5"),
    ("CAST(x AS string)", {"x": float("inf")}, "Infinity"),
    ("CAST(a AS long)", {"a": True}, 1),
    ("CAST(n AS boolean)", {"n": -3}, True),
    ("CAST(t AS string)", {"t": T0}, "2024-05-17 13:45:30.25"),
    ("CAST(t AS long)", {"t": datetime(1969, 12, 31, 23, 59, 59, 500000)}, -1),
    ("CAST(t AS double)", {"t": datetime(1970, 1, 1, 0, 0, 1, 500000)}, 1.5),
    ("CAST(n AS timestamp)", {"n": 86400}, datetime(1970, 1, 2)),
    ("CAST(n AS timestamp)", {"n": LONG_MAX}, _),
    ("CAST(x AS timestamp)", {"x": 1e308}, _),  # seconds whose microseconds overflow a double
    ("CAST(NULL AS double)", {}, _),
    # string functions
    ("upper(s)", {"s": "aBc"}, "ABC"),
    ("lower(s)", {"s": "aBc"}, "abc"),
    ("length(s)", {"s": "héllo"}, 5),
    ("trim(s)", {"s": "\t a \t"}, "\t a \t"),
    ("trim(s)", {"s": "  a  "}, "a"),
    ("ltrim(s)", {"s": "  a  "}, "a  "),
    ("substring(s, 2, 3)", {"s": "abcdef"}, "bcd"),
    ("substring(s, 0, 2)", {"s": "abcdef"}, "ab"),
    ("substring(s, -2)", {"s": "abcdef"}, "ef"),
    ("substring(s, n, 2)", {"s": "abcdef", "n": LONG_MAX}, _),
    ("concat(s, '-', s)", {"s": "a"}, "a-a"),
    ("concat(s, NULL)", {"s": "a"}, _),
    ("replace(s, '', 'x')", {"s": "ab"}, "ab"),
    ("replace(s, 'b', '')", {"s": "abba"}, "aa"),
    ("replace(replace(replace(s, 'a', s), 'a', s), 'a', s)", {"s": "a" * 20}, "a" * 160_000),
    ("replace(replace(replace(replace(s, 'a', s), 'a', s), 'a', s), 'a', s)", {"s": "a" * 20}, _),
    ("starts_with(s, 'ab')", {"s": "abc"}, True),
    ("endswith(s, 'ab')", {"s": "abc"}, False),
    ("contains(s, '')", {"s": "abc"}, True),
    ("lpad(s, 5, 'xy')", {"s": "ab"}, "xyxab"),
    ("lpad(s, 1, 'xy')", {"s": "ab"}, "a"),
    ("rpad(s, n, '.')", {"s": "ab", "n": -5}, ""),
    ("rpad(s, n, '.')", {"s": "ab", "n": 10**12}, _),
    # numeric functions
    ("abs(n)", {"n": LONG_MIN}, _),
    ("abs(x)", {"x": -1.5}, 1.5),
    ("round(x, 2)", {"x": 2.675}, 2.68),
    ("round(x)", {"x": -2.5}, -3.0),
    ("round(n, 2)", {"n": 7}, 7),
    ("floor(x)", {"x": -1.5}, -2),
    ("ceil(x)", {"x": 1e30}, _),
    ("ceiling(n)", {"n": 3}, 3),
    ("sqrt(x)", {"x": -1.0}, NAN),
    ("ln(x)", {"x": 0.0}, _),
    ("log10(x)", {"x": 1000.0}, 3.0),
    ("exp(x)", {"x": 1000.0}, float("inf")),
    ("power(x, 0.5)", {"x": -8.0}, NAN),
    ("pow(n, 2)", {"n": 3}, 9.0),
    ("sign(n)", {"n": -4}, -1.0),
    ("greatest(n, x)", {"n": 2, "x": _}, 2.0),
    ("least(n, m)", {"n": _, "m": _}, _),
    ("greatest(x, 1)", {"x": NAN}, NAN),
    ("coalesce(n, m, 0)", {"n": _, "m": 5}, 5),
    ("nullif(n, 0)", {"n": 0}, _),
    ("nullif(n, m)", {"n": 3, "m": _}, 3),
    # date and time
    ("year(t) * 10000 + month(t) * 100 + day(t)", {"t": T0}, 20240517),
    ("hour(t) * 3600 + minute(t) * 60 + second(t)", {"t": T0}, 49530),
    ("date_trunc('week', t)", {"t": T0}, datetime(2024, 5, 13)),
    ("date_trunc('QUARTER', t)", {"t": T0}, datetime(2024, 4, 1)),
    ("date_trunc('minute', t)", {"t": T0}, datetime(2024, 5, 17, 13, 45)),
    (
        "date_trunc('millisecond', t)",
        {"t": datetime(2024, 1, 1, 0, 0, 0, 123456)},
        datetime(2024, 1, 1, 0, 0, 0, 123000),
    ),
    ("unix_timestamp(t)", {"t": datetime(1970, 1, 1, 0, 1)}, 60),
    ("to_timestamp(s)", {"s": "2024-02-29"}, datetime(2024, 2, 29)),
    ("to_timestamp(s)", {"s": "2023-02-29"}, _),
    ("timestamp_seconds(n)", {"n": 60}, datetime(1970, 1, 1, 0, 1)),
    ("timestamp_seconds(n)", {"n": LONG_MAX}, _),
    ("t + INTERVAL 90 MINUTES", {"t": T0}, datetime(2024, 5, 17, 15, 15, 30, 250000)),
    ("t - INTERVAL 1 DAY", {"t": T0}, datetime(2024, 5, 16, 13, 45, 30, 250000)),
    ("INTERVAL 2 SECONDS + t", {"t": T0}, datetime(2024, 5, 17, 13, 45, 32, 250000)),
    ("t + INTERVAL 1 SECOND", {"t": datetime(9999, 12, 30, 23, 59, 59, 999999)}, _),
    ("CAST(s AS timestamp)", {"s": "0001-01-01"}, _),
    ("TIMESTAMP '2024-01-01 10:00:00'", {}, datetime(2024, 1, 1, 10)),
]


def _row(values: dict) -> dict:
    return {f.name: values.get(f.name) for f in SCHEMA.fields}


def _same(got, want) -> bool:
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    return type(got) is type(want) and got == want


@pytest.mark.parametrize("text, values, want", CASES, ids=[c[0] for c in CASES])
def test_python_reference(text, values, want):
    got = evaluate(check_expression(text, SCHEMA, "e"), _row(values))
    assert _same(got, want), got


def test_python_reference_reads_aware_timestamps():
    checked = check_expression("hour(t)", SCHEMA, "e")
    aware = datetime(2024, 1, 1, 12, tzinfo=timezone.utc).astimezone(timezone(timedelta(hours=5)))
    assert evaluate(checked, {"t": aware}) == 12


def test_spark_agrees_and_no_value_fails_the_query(spark):
    assert spark.conf.get("spark.sql.ansi.enabled") == "true"  # the mode where errors would raise
    checked = [check_expression(text, SCHEMA, "e") for text, _, _ in CASES]
    rows = [tuple(_aware(_row(values)[f.name]) for f in SCHEMA.fields) for _, values, _ in CASES]
    frame = spark.createDataFrame(rows, SCHEMA.spark_type()).coalesce(1)
    results = frame.select(*[c.to_column().alias(f"e{i}") for i, c in enumerate(checked)]).collect()
    wrong = [
        (text, _utc(results[i][i]), want)
        for i, (text, _, want) in enumerate(CASES)
        if not _same(_utc(results[i][i]), want)
    ]
    assert not wrong


def _aware(value):
    return value.replace(tzinfo=timezone.utc) if isinstance(value, datetime) else value


def _utc(value):
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).replace(tzinfo=None)
    return value
