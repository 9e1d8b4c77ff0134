"""The allow-list of scalar functions, and the names refused outright.

Each entry says which arguments it takes, what it returns and how to build it from
``pyspark.sql.functions`` (never from SQL text); the tests hold a plain-Python reference of
each (``tests/boxes/expressions/reference``) that the Spark columns are compared against.
Builders receive the functions module ``F`` and their arguments as Columns already of the
declared types (literal-only arguments arrive as Python values). Where Spark in ANSI mode
would raise on a value (an int overflow, a huge pad), the builder guards it so the result is
NULL: one bad tuple must not kill a streaming query.

Parameter kinds: a DataType; ``NUMERIC`` (long or double, all such arguments unified) and
``SAME`` (any type, unified). A result of ``SAME`` or ``NUMERIC`` is the unified type.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from boxes.expressions import geo, guards
from boxes.expressions import sqlvalues as sv
from boxes.types import DataType

S, L, D, B, T = (
    DataType.STRING,
    DataType.LONG,
    DataType.DOUBLE,
    DataType.BOOLEAN,
    DataType.TIMESTAMP,
)
NUMERIC = "numeric"
SAME = "same"
MAX_PAD = 10_000
# concat and replace can multiply a string's length at every level of nesting; a result that
# could pass this many characters is NULL, so no expression can exhaust an executor's memory.
MAX_STRING = 1_000_000
TRUNC_UNITS = (
    "year",
    "quarter",
    "month",
    "week",
    "day",
    "hour",
    "minute",
    "second",
    "millisecond",
    "microsecond",
)


@dataclass(frozen=True)
class Function:
    """One allow-listed function; ``optional`` trailing parameters may be left out, a
    ``variadic`` last parameter repeats, and a ``strict`` function is NULL on any NULL argument."""

    params: tuple[Any, ...]
    result: Any
    spark: Callable[..., Any]
    optional: int = 0
    variadic: bool = False
    strict: bool = True
    literals: frozenset[int] = frozenset()
    typed: bool = False  # the builder also receives the unified argument type after ``F``

    @property
    def min_args(self) -> int:
        return len(self.params) - self.optional

    @property
    def max_args(self) -> float:
        return math.inf if self.variadic else len(self.params)

    def param(self, index: int) -> Any:
        return self.params[min(index, len(self.params) - 1)]


def _int_arg(column):
    """A long argument Spark takes as int: out of int range gives NULL, not CAST_OVERFLOW."""
    return column.try_cast("int")


def _substring_spark(F, text, pos, length=None):
    if length is None:
        return F.substring(text, _int_arg(pos), F.lit(sv.INT_MAX))
    return F.substring(text, _int_arg(pos), _int_arg(length))


def _pad_spark(name: str) -> Callable[..., Any]:
    def build(F, text, size, fill):
        clamped = F.greatest(size, F.lit(-1).cast("bigint")).cast("int")
        return F.when(size <= MAX_PAD, getattr(F, name)(text, clamped, fill))

    return build


def _replace_spark(F, text, search, replacement):
    longest = (
        F.length(text).cast("double")
        * F.length(replacement).cast("double")
        / F.greatest(F.length(search), F.lit(1)).cast("double")
    )
    return F.when(longest <= MAX_STRING, F.replace(text, search, replacement))


def _concat_spark(F, *parts):
    total = sum(F.length(p).cast("double") for p in parts)
    return F.when(total <= MAX_STRING, F.concat(*parts))


def _abs_spark(F, kind, value):
    return F.when(value != sv.LONG_MIN, F.abs(value)) if kind is L else F.abs(value)


def _to_long_spark(name: str) -> Callable[..., Any]:
    def build(F, kind, value):
        if kind is L:
            return value
        return F.when((value >= -(2.0**63)) & (value < 2.0**63), getattr(F, name)(value))

    return build


def _timestamp_seconds_spark(F, seconds):
    limit = F.lit(sv.MIN_MICROS // 1_000_000), F.lit(sv.MAX_MICROS // 1_000_000)
    return F.when(seconds.between(*limit), F.timestamp_seconds(seconds))


def _to_timestamp_spark(F, text):
    return guards.to_timestamp(F, text, source_is_string=True)


def _simple(name: str) -> Callable[..., Any]:
    return lambda F, *args: getattr(F, name)(*args)


def _part(spark_name: str) -> Function:
    return Function((T,), L, _simple(spark_name))


FUNCTIONS: dict[str, Function] = {
    # strings
    "lower": Function((S,), S, _simple("lower")),
    "upper": Function((S,), S, _simple("upper")),
    "length": Function((S,), L, _simple("length")),
    "trim": Function((S,), S, _simple("trim")),
    "ltrim": Function((S,), S, _simple("ltrim")),
    "rtrim": Function((S,), S, _simple("rtrim")),
    "substring": Function((S, L, L), S, _substring_spark, optional=1),
    "concat": Function((S,), S, _concat_spark, variadic=True),
    "replace": Function((S, S, S), S, _replace_spark),
    "starts_with": Function((S, S), B, _simple("startswith")),
    "ends_with": Function((S, S), B, _simple("endswith")),
    "contains": Function((S, S), B, _simple("contains")),
    "lpad": Function((S, L, S), S, _pad_spark("lpad")),
    "rpad": Function((S, L, S), S, _pad_spark("rpad")),
    # numbers
    "abs": Function((NUMERIC,), NUMERIC, _abs_spark, typed=True),
    "round": Function((NUMERIC, L), NUMERIC, _simple("round"), optional=1, literals=frozenset({1})),
    "floor": Function((NUMERIC,), L, _to_long_spark("floor"), typed=True),
    "ceil": Function((NUMERIC,), L, _to_long_spark("ceil"), typed=True),
    "sqrt": Function((D,), D, _simple("sqrt")),
    "exp": Function((D,), D, _simple("exp")),
    "ln": Function((D,), D, _simple("ln")),
    "log10": Function((D,), D, _simple("log10")),
    "pow": Function((D, D), D, _simple("pow")),
    "sign": Function((D,), D, _simple("signum")),
    # trigonometry, in radians
    "sin": Function((D,), D, _simple("sin")),
    "cos": Function((D,), D, _simple("cos")),
    "tan": Function((D,), D, _simple("tan")),
    "asin": Function((D,), D, _simple("asin")),
    "acos": Function((D,), D, _simple("acos")),
    "atan": Function((D,), D, _simple("atan")),
    "atan2": Function((D, D), D, _simple("atan2")),
    "radians": Function((D,), D, _simple("radians")),
    "degrees": Function((D,), D, _simple("degrees")),
    # geography (boxes/expressions/geo.py): longitude before latitude, in degrees
    "distance_km": Function((D, D, D, D), D, geo.distance_km),
    "point_in_box": Function((D, D, D, D, D, D), B, geo.point_in_box),
    "point_in_polygon": Function((D, D, S), B, geo.point_in_polygon, literals=frozenset({2})),
    "greatest": Function((SAME, SAME), SAME, _simple("greatest"), variadic=True, strict=False),
    "least": Function((SAME, SAME), SAME, _simple("least"), variadic=True, strict=False),
    "coalesce": Function((SAME,), SAME, _simple("coalesce"), variadic=True, strict=False),
    "nullif": Function((SAME, SAME), SAME, _simple("nullif"), strict=False),
    # date and time (timestamps are UTC)
    "year": _part("year"),
    "month": _part("month"),
    "day": _part("dayofmonth"),
    "hour": _part("hour"),
    "minute": _part("minute"),
    "second": _part("second"),
    "date_trunc": Function((S, T), T, _simple("date_trunc"), literals=frozenset({0})),
    "unix_timestamp": Function((T,), L, _simple("unix_seconds")),
    "to_timestamp": Function((S,), T, _to_timestamp_spark),
    "timestamp_seconds": Function((L,), T, _timestamp_seconds_spark),
}
ALIASES = {
    "power": "pow",
    "ceiling": "ceil",
    "substr": "substring",
    "signum": "sign",
    "startswith": "starts_with",
    "endswith": "ends_with",
    "dayofmonth": "day",
}

# Refused by name with FORBIDDEN_FUNCTION: reflection and code execution, UDFs, generators,
# side effects and anything whose result is not reproducible from the tuple alone.
FORBIDDEN = frozenset(
    {
        "java_method",
        "reflect",
        "try_reflect",
        "eval",
        "exec",
        "execute",
        "system",
        "udf",
        "pandas_udf",
        "python_udf",
        "call_udf",
        "call_function",
        "explode",
        "explode_outer",
        "posexplode",
        "posexplode_outer",
        "inline",
        "inline_outer",
        "stack",
        "json_tuple",
        "raise_error",
        "assert_true",
        "input_file_name",
        "input_file_block_start",
        "input_file_block_length",
        "spark_partition_id",
        "monotonically_increasing_id",
        "now",
        "localtimestamp",
        "rand",
        "random",
        "randn",
        "randstr",
        "uniform",
        "uuid",
        "shuffle",
        "version",
        "user",
        "session_user",
        "curdate",
        "sleep",
        "xpath",
    }
)


def forbidden(name: str) -> bool:
    lowered = name.lower()
    return (
        lowered in FORBIDDEN
        or "." in lowered
        or lowered.startswith("current_")
        or "udf" in lowered
        or lowered.startswith("xpath")
    )


def lookup(name: str) -> Function | None:
    lowered = name.lower()
    return FUNCTIONS.get(ALIASES.get(lowered, lowered))


def canonical(name: str) -> str:
    lowered = name.lower()
    return ALIASES.get(lowered, lowered)
