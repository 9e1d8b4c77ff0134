"""A plain-Python evaluator of checked expressions: the independent reference for the Spark columns.

``evaluate(check_expression(...), row)`` computes one value, ``aggregate(check_aggregate(...),
rows)`` one group's. Rows map field names to Python values; timestamps may be naive (meaning UTC)
or aware.

It follows SQL as Spark does it: NULL propagates, AND/OR/NOT are three-valued, ``/`` and
``%`` by zero give NULL, ``%`` takes the dividend's sign, integer overflow gives NULL (as the
``try_`` functions the columns use), and NaN equals NaN and sorts above every number.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping, Sequence
from datetime import timezone
from functools import singledispatch
from typing import Any

from boxes.expressions import CheckedAggregate, CheckedExpr, functions
from boxes.expressions import nodes as n
from boxes.expressions.sqlvalues import from_micros, like_regex, to_micros
from boxes.types import DataType
from tests.boxes.expressions.reference.functions import PYTHON
from tests.boxes.expressions.reference.values import cast, compare, long_or_null, order_key


def evaluate(checked: CheckedExpr, row: Mapping[str, Any]) -> Any:
    return _eval(checked.node, row)


def aggregate(checked: CheckedAggregate, rows: Sequence[Mapping[str, Any]]) -> Any:
    """One group's value; NULL arguments are skipped first, as SQL does."""
    values = [evaluate(checked.argument, r) for r in rows] if checked.argument else [1] * len(rows)
    present = [v for v in values if v is not None]
    return _AGGREGATES[checked.function](present, checked.type)


def _sum(values: list[Any], kind: DataType) -> Any:
    if not values:
        return None
    total = sum(values)
    return long_or_null(total) if kind is DataType.LONG else total


def _avg(values: list[Any], kind: DataType) -> Any:
    return sum(float(v) for v in values) / len(values) if values else None


def _extreme(largest: bool):
    def pick(values: list[Any], kind: DataType) -> Any:
        return (max if largest else min)(values, key=order_key) if values else None

    return pick


_AGGREGATES = {
    "count": lambda values, kind: len(values),
    "sum": _sum,
    "avg": _avg,
    "min": _extreme(False),
    "max": _extreme(True),
}


@singledispatch
def _eval(node: n.Node, row: Mapping[str, Any]) -> Any:
    raise TypeError(f"no evaluator for {type(node).__name__}")


@_eval.register
def _(node: n.Lit, row):
    return node.value


@_eval.register
def _(node: n.Ref, row):
    value = row.get(node.name)
    if value is None:
        return None
    if node.type is DataType.DOUBLE:
        return float(value)
    if node.type is DataType.TIMESTAMP and value.tzinfo is not None:
        return value.astimezone(timezone.utc).replace(tzinfo=None)
    return value


@_eval.register
def _(node: n.Arith, row):
    left, right = _eval(node.left, row), _eval(node.right, row)
    if left is None or right is None:
        return None
    if node.op in "/%" and right == 0:
        return None
    result = _ARITH[node.op](left, right)
    return long_or_null(result) if node.type is DataType.LONG else result


def _remainder(left: Any, right: Any) -> Any:
    """Java's ``%``: the result takes the dividend's sign; an infinite dividend gives NaN."""
    if isinstance(left, int):
        magnitude = abs(left) % abs(right)
        return magnitude if left >= 0 else -magnitude
    if math.isinf(left):
        return math.nan
    return math.fmod(left, right)


_ARITH = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "%": _remainder,
}


@_eval.register
def _(node: n.Neg, row):
    value = _eval(node.operand, row)
    if value is None:
        return None
    return long_or_null(-value) if node.type is DataType.LONG else -value


@_eval.register
def _(node: n.Shift, row):
    value = _eval(node.operand, row)
    return None if value is None else from_micros(to_micros(value) + node.micros)


@_eval.register
def _(node: n.Elapsed, row):
    left, right = _eval(node.left, row), _eval(node.right, row)
    if left is None or right is None:
        return None
    return (to_micros(left) - to_micros(right)) / 1_000_000


_ORDER = {
    "=": lambda c: c == 0,
    "!=": lambda c: c != 0,
    "<": lambda c: c < 0,
    "<=": lambda c: c <= 0,
    ">": lambda c: c > 0,
    ">=": lambda c: c >= 0,
}


@_eval.register
def _(node: n.Compare, row):
    left, right = _eval(node.left, row), _eval(node.right, row)
    if node.op == "<=>":
        return (left is None and right is None) or (
            left is not None and right is not None and compare(left, right) == 0
        )
    if left is None or right is None:
        return None
    return _ORDER[node.op](compare(left, right))


@_eval.register
def _(node: n.Logic, row):
    left, right = _eval(node.left, row), _eval(node.right, row)
    decisive = node.op == "OR"  # the value that settles the result whatever the other side is
    if left is decisive or right is decisive:
        return decisive
    if left is None or right is None:
        return None
    return not decisive


@_eval.register
def _(node: n.Not, row):
    value = _eval(node.operand, row)
    return None if value is None else not value


@_eval.register
def _(node: n.IsNull, row):
    return (_eval(node.operand, row) is None) != node.negated


@_eval.register
def _(node: n.In, row):
    value = _eval(node.operand, row)
    if value is None:
        return None
    items = [_eval(item, row) for item in node.items]
    if any(item is not None and compare(value, item) == 0 for item in items):
        found = True
    elif None in items:
        return None
    else:
        found = False
    return found != node.negated


@_eval.register
def _(node: n.Between, row):
    value, low, high = (_eval(x, row) for x in (node.operand, node.low, node.high))
    above = None if value is None or low is None else compare(value, low) >= 0
    below = None if value is None or high is None else compare(value, high) <= 0
    result = _and(above, below)
    return None if result is None else result != node.negated


def _and(left: bool | None, right: bool | None) -> bool | None:
    if left is False or right is False:
        return False
    return None if left is None or right is None else True


@_eval.register
def _(node: n.Like, row):
    value = _eval(node.operand, row)
    if value is None:
        return None
    return (like_regex(node.pattern).fullmatch(value) is not None) != node.negated


@_eval.register
def _(node: n.Case, row):
    for condition, value in node.branches:
        if _eval(condition, row) is True:
            return _eval(value, row)
    return _eval(node.default, row)


@_eval.register
def _(node: n.Cast, row):
    return cast(_eval(node.operand, row), node.operand.type, node.type)


@_eval.register
def _(node: n.Call, row):
    args = [_eval(arg, row) for arg in node.args]
    if functions.FUNCTIONS[node.name].strict and None in args:
        return None
    return PYTHON[node.name](*args)
