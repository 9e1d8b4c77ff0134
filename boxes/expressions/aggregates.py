"""The aggregate functions of an aggregate box: count, sum, avg, min and max.

Each is built from Spark's own aggregates; ``sum`` and ``avg`` use ``try_sum``/``try_avg``
so a long overflow in a window yields NULL instead of failing the streaming query.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from boxes.types import DataType


@dataclass(frozen=True)
class Aggregate:
    numeric: bool  # the argument must be a number
    result: Callable[[DataType], DataType]  # the result type from the argument's
    spark: Callable[..., Any]  # (F, argument column) -> aggregate column
    # The result summarises its group and is no tuple's own value (count, sum, avg); min and
    # max return one tuple's value. Only a summary may be read with READ_AGGREGATE
    # (``AggregateBox.aggregate_only``).
    summary: bool = False


AGGREGATES: dict[str, Aggregate] = {
    "count": Aggregate(False, lambda kind: DataType.LONG, lambda F, c: F.count(c), True),
    "sum": Aggregate(True, lambda kind: kind, lambda F, c: F.try_sum(c), True),
    "avg": Aggregate(True, lambda kind: DataType.DOUBLE, lambda F, c: F.try_avg(c), True),
    "min": Aggregate(False, lambda kind: kind, lambda F, c: F.min(c)),
    "max": Aggregate(False, lambda kind: kind, lambda F, c: F.max(c)),
}
