"""The allow-list of scalar functions, and the names refused outright.

Each entry says which arguments it takes, what it returns, how to build it from
``pyspark.sql.functions`` (never from SQL text) and how the plain-Python reference computes
it. Builders receive the functions module ``F`` and their arguments as Columns already of the
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
from datetime import datetime, timedelta
from typing import Any

from boxes.expressions import guards
from boxes.expressions import sqlvalues as sv
from boxes.types import DataType

S, L, D, B, T = (DataType.STRING, DataType.LONG, DataType.DOUBLE, DataType.BOOLEAN,
                 DataType.TIMESTAMP)
NUMERIC = "numeric"
SAME = "same"
MAX_PAD = 10_000
# concat and replace can multiply a string's length at every level of nesting; a result that
# could pass this many characters is NULL, so no expression can exhaust an executor's memory.
MAX_STRING = 1_000_000
TRUNC_UNITS = ("year", "quarter", "month", "week", "day", "hour", "minute", "second",
               "millisecond", "microsecond")


@dataclass(frozen=True)
class Function:
    """One allow-listed function; ``optional`` trailing parameters may be left out, a
    ``variadic`` last parameter repeats, and a ``strict`` function is NULL on any NULL argument."""

    params: tuple[Any, ...]
    result: Any
    spark: Callable[..., Any]
    python: Callable[..., Any]
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


def _substring_py(text: str, pos: int, length: int = sv.INT_MAX) -> str | None:
    if not (sv.INT_MIN <= pos <= sv.INT_MAX and sv.INT_MIN <= length <= sv.INT_MAX):
        return None
    size = len(text)
    start = pos - 1 if pos > 0 else size + pos if pos < 0 else 0
    end = max(min(start + length, sv.INT_MAX), sv.INT_MIN)
    start = max(start, 0)
    return "" if start >= end else text[start:end]


def _substring_spark(F, text, pos, length=None):
    if length is None:
        return F.substring(text, _int_arg(pos), F.lit(sv.INT_MAX))
    return F.substring(text, _int_arg(pos), _int_arg(length))


def _pad_py(left: bool) -> Callable[[str, int, str], str | None]:
    def pad(text: str, size: int, fill: str) -> str | None:
        if size > MAX_PAD:
            return None
        spaces = size - len(text)
        if spaces <= 0 or not fill:
            return text[:max(size, 0)]
        filler = (fill * (spaces // len(fill) + 1))[:spaces]
        return filler + text if left else text + filler
    return pad


def _pad_spark(name: str) -> Callable[..., Any]:
    def build(F, text, size, fill):
        clamped = F.greatest(size, F.lit(-1).cast("bigint")).cast("int")
        return F.when(size <= MAX_PAD, getattr(F, name)(text, clamped, fill))
    return build


def _replace_py(text: str, search: str, replacement: str) -> str | None:
    if len(text) * len(replacement) / max(len(search), 1) > MAX_STRING:
        return None
    return text.replace(search, replacement) if search else text


def _replace_spark(F, text, search, replacement):
    longest = (F.length(text).cast("double") * F.length(replacement).cast("double")
               / F.greatest(F.length(search), F.lit(1)).cast("double"))
    return F.when(longest <= MAX_STRING, F.replace(text, search, replacement))


def _concat_py(*parts: str) -> str | None:
    return None if sum(len(p) for p in parts) > MAX_STRING else "".join(parts)


def _concat_spark(F, *parts):
    total = sum(F.length(p).cast("double") for p in parts)
    return F.when(total <= MAX_STRING, F.concat(*parts))


def _abs_py(value: Any) -> Any:
    return sv.long_or_null(abs(value)) if isinstance(value, int) else abs(value)


def _abs_spark(F, kind, value):
    return F.when(value != sv.LONG_MIN, F.abs(value)) if kind is L else F.abs(value)


def _round_py(value: Any, digits: int = 0) -> Any:
    return value if isinstance(value, int) else sv.round_half_up(value, digits)


def _to_long_py(op: Callable[[float], int]) -> Callable[[Any], int | None]:
    def convert(value: Any) -> int | None:
        if isinstance(value, int):
            return value
        if math.isnan(value) or not -(2.0 ** 63) <= value < 2.0 ** 63:
            return None
        return op(value)
    return convert


def _to_long_spark(name: str) -> Callable[..., Any]:
    def build(F, kind, value):
        if kind is L:
            return value
        return F.when((value >= -(2.0 ** 63)) & (value < 2.0 ** 63), getattr(F, name)(value))
    return build


def _sqrt_py(value: float) -> float:
    return math.nan if value < 0 else math.sqrt(value)


def _exp_py(value: float) -> float:
    try:
        return math.exp(value)
    except OverflowError:
        return math.inf


def _log_py(op: Callable[[float], float]) -> Callable[[float], float | None]:
    def log(value: float) -> float | None:
        return None if value <= 0 else op(value)
    return log


def _pow_py(base: float, exponent: float) -> float:
    """Java's Math.pow: overflow gives infinity and a domain error NaN, never an exception."""
    odd = exponent.is_integer() and exponent % 2 == 1
    try:
        return math.pow(base, exponent)
    except OverflowError:
        return -math.inf if base < 0 and odd else math.inf
    except ValueError:
        if base == 0:
            return -math.inf if odd and math.copysign(1.0, base) < 0 else math.inf
        return math.nan


def _sign_py(value: float) -> float:
    return value if value == 0 or math.isnan(value) else math.copysign(1.0, value)


def _extreme_py(largest: bool) -> Callable[..., Any]:
    def pick(*values: Any) -> Any:
        present = [v for v in values if v is not None]
        if not present:
            return None
        return (max if largest else min)(present, key=sv.order_key)
    return pick


def _coalesce_py(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def _nullif_py(value: Any, other: Any) -> Any:
    if value is None or other is None:
        return value
    return None if sv.compare(value, other) == 0 else value


def _trunc_py(unit: str, ts: datetime) -> datetime:
    unit = unit.lower()
    if unit == "microsecond":
        return ts
    if unit == "millisecond":
        return ts.replace(microsecond=ts.microsecond // 1000 * 1000)
    if unit == "week":
        day = ts.replace(hour=0, minute=0, second=0, microsecond=0)
        return day - timedelta(days=day.weekday())
    if unit == "quarter":
        ts = ts.replace(month=(ts.month - 1) // 3 * 3 + 1)
        unit = "month"
    order = ("year", "month", "day", "hour", "minute", "second")
    reset = {"month": 1, "day": 1, "hour": 0, "minute": 0, "second": 0}
    keep = order.index(unit)
    smaller: dict[str, Any] = {name: value for name, value in reset.items()
                               if order.index(name) > keep}
    return ts.replace(microsecond=0, **smaller)


def _timestamp_seconds_spark(F, seconds):
    limit = F.lit(sv.MIN_MICROS // 1_000_000), F.lit(sv.MAX_MICROS // 1_000_000)
    return F.when(seconds.between(*limit), F.timestamp_seconds(seconds))


def _timestamp_seconds_py(seconds: int) -> datetime | None:
    if not sv.MIN_MICROS // 1_000_000 <= seconds <= sv.MAX_MICROS // 1_000_000:
        return None
    return sv.from_micros(seconds * 1_000_000)


def _to_timestamp_spark(F, text):
    return guards.to_timestamp(F, text, source_is_string=True)


def _simple(name: str) -> Callable[..., Any]:
    return lambda F, *args: getattr(F, name)(*args)


def _part(spark_name: str, attribute: str) -> Function:
    return Function((T,), L, _simple(spark_name), lambda ts: getattr(ts, attribute))

FUNCTIONS: dict[str, Function] = {
    # strings
    "lower": Function((S,), S, _simple("lower"), str.lower),
    "upper": Function((S,), S, _simple("upper"), str.upper),
    "length": Function((S,), L, _simple("length"), len),
    "trim": Function((S,), S, _simple("trim"), lambda s: s.strip(" ")),
    "ltrim": Function((S,), S, _simple("ltrim"), lambda s: s.lstrip(" ")),
    "rtrim": Function((S,), S, _simple("rtrim"), lambda s: s.rstrip(" ")),
    "substring": Function((S, L, L), S, _substring_spark, _substring_py, optional=1),
    "concat": Function((S,), S, _concat_spark, _concat_py, variadic=True),
    "replace": Function((S, S, S), S, _replace_spark, _replace_py),
    "starts_with": Function((S, S), B, _simple("startswith"), str.startswith),
    "ends_with": Function((S, S), B, _simple("endswith"), str.endswith),
    "contains": Function((S, S), B, _simple("contains"), lambda s, part: part in s),
    "lpad": Function((S, L, S), S, _pad_spark("lpad"), _pad_py(left=True)),
    "rpad": Function((S, L, S), S, _pad_spark("rpad"), _pad_py(left=False)),
    # numbers
    "abs": Function((NUMERIC,), NUMERIC, _abs_spark, _abs_py, typed=True),
    "round": Function((NUMERIC, L), NUMERIC, _simple("round"), _round_py, optional=1,
                      literals=frozenset({1})),
    "floor": Function((NUMERIC,), L, _to_long_spark("floor"), _to_long_py(math.floor),
                      typed=True),
    "ceil": Function((NUMERIC,), L, _to_long_spark("ceil"), _to_long_py(math.ceil),
                     typed=True),
    "sqrt": Function((D,), D, _simple("sqrt"), _sqrt_py),
    "exp": Function((D,), D, _simple("exp"), _exp_py),
    "ln": Function((D,), D, _simple("ln"), _log_py(math.log)),
    "log10": Function((D,), D, _simple("log10"), _log_py(math.log10)),
    "pow": Function((D, D), D, _simple("pow"), _pow_py),
    "sign": Function((D,), D, _simple("signum"), _sign_py),
    "greatest": Function((SAME, SAME), SAME, _simple("greatest"), _extreme_py(True),
                         variadic=True, strict=False),
    "least": Function((SAME, SAME), SAME, _simple("least"), _extreme_py(False),
                      variadic=True, strict=False),
    "coalesce": Function((SAME,), SAME, _simple("coalesce"), _coalesce_py, variadic=True,
                         strict=False),
    "nullif": Function((SAME, SAME), SAME, _simple("nullif"), _nullif_py, strict=False),
    # date and time (timestamps are UTC)
    "year": _part("year", "year"),
    "month": _part("month", "month"),
    "day": _part("dayofmonth", "day"),
    "hour": _part("hour", "hour"),
    "minute": _part("minute", "minute"),
    "second": _part("second", "second"),
    "date_trunc": Function((S, T), T, _simple("date_trunc"), _trunc_py, literals=frozenset({0})),
    "unix_timestamp": Function((T,), L, _simple("unix_seconds"),
                               lambda ts: sv.to_micros(ts) // 1_000_000),
    "to_timestamp": Function((S,), T, _to_timestamp_spark, sv.parse_timestamp),
    "timestamp_seconds": Function((L,), T, _timestamp_seconds_spark, _timestamp_seconds_py),
}
ALIASES = {"power": "pow", "ceiling": "ceil", "substr": "substring", "signum": "sign",
           "startswith": "starts_with", "endswith": "ends_with", "dayofmonth": "day"}

# Refused by name with FORBIDDEN_FUNCTION: reflection and code execution, UDFs, generators,
# side effects and anything whose result is not reproducible from the tuple alone.
FORBIDDEN = frozenset({
    "java_method", "reflect", "try_reflect", "eval", "exec", "execute", "system", "udf",
    "pandas_udf", "python_udf", "call_udf", "call_function", "explode", "explode_outer",
    "posexplode", "posexplode_outer", "inline", "inline_outer", "stack", "json_tuple",
    "raise_error", "assert_true", "input_file_name", "input_file_block_start",
    "input_file_block_length", "spark_partition_id", "monotonically_increasing_id", "now",
    "localtimestamp", "rand", "random", "randn", "randstr", "uniform", "uuid", "shuffle",
    "version", "user", "session_user", "curdate", "sleep", "xpath",
})


def forbidden(name: str) -> bool:
    lowered = name.lower()
    return (lowered in FORBIDDEN or "." in lowered or lowered.startswith("current_")
            or "udf" in lowered or lowered.startswith("xpath"))


def lookup(name: str) -> Function | None:
    lowered = name.lower()
    return FUNCTIONS.get(ALIASES.get(lowered, lowered))


def canonical(name: str) -> str:
    lowered = name.lower()
    return ALIASES.get(lowered, lowered)
