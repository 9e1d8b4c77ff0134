"""The aggregate functions of an aggregate box: count, sum, avg, min and max.

Each is built from Spark's own aggregates; ``sum`` and ``avg`` use ``try_sum``/``try_avg``
so a long overflow in a window yields NULL instead of failing the streaming query. The
Python versions skip NULLs as SQL does and are the reference the tests compare against.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from boxes.expressions import sqlvalues as sv
from boxes.types import DataType


def _sum(values: list[Any], kind: DataType) -> Any:
    if not values:
        return None
    total = sum(values)
    return sv.long_or_null(total) if kind is DataType.LONG else total


def _avg(values: list[Any], kind: DataType) -> Any:
    return sum(float(v) for v in values) / len(values) if values else None


def _extreme(largest: bool) -> Callable[[list[Any], DataType], Any]:
    def pick(values: list[Any], kind: DataType) -> Any:
        return (max if largest else min)(values, key=sv.order_key) if values else None
    return pick


@dataclass(frozen=True)
class Aggregate:
    numeric: bool  # the argument must be a number
    result: Callable[[DataType], DataType]  # the result type from the argument's
    spark: Callable[..., Any]  # (F, argument column) -> aggregate column
    python: Callable[[list[Any], DataType], Any]  # (non-NULL values, argument type) -> value


AGGREGATES: dict[str, Aggregate] = {
    "count": Aggregate(False, lambda kind: DataType.LONG, lambda F, c: F.count(c),
                       lambda values, kind: len(values)),
    "sum": Aggregate(True, lambda kind: kind, lambda F, c: F.try_sum(c), _sum),
    "avg": Aggregate(True, lambda kind: DataType.DOUBLE, lambda F, c: F.try_avg(c), _avg),
    "min": Aggregate(False, lambda kind: kind, lambda F, c: F.min(c), _extreme(False)),
    "max": Aggregate(False, lambda kind: kind, lambda F, c: F.max(c), _extreme(True)),
}


def aggregate_values(function: str, values: Sequence[Any], kind: DataType) -> Any:
    """Apply ``function`` to one group's argument values; NULLs are skipped first."""
    return AGGREGATES[function].python([v for v in values if v is not None], kind)
