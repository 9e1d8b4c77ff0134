"""Checked tree to Spark Column, from ``pyspark.sql.functions`` and Column operators only.

No user text ever reaches ``expr()``, ``selectExpr`` or SQL: names are checked identifiers
passed to ``F.col`` and constants go through ``F.lit``.

Why ``try_*`` everywhere: Spark 4 runs in ANSI mode by default, where an integer overflow, a
division by zero or a string that does not convert raises at run time and would stop a
streaming query for one bad tuple. So long arithmetic uses ``try_add``/``try_subtract``/
``try_multiply``, ``/`` and ``%`` use ``try_divide``/``try_mod`` (NULL on zero, as non-ANSI
Spark did), CAST uses ``Column.try_cast``, and results that could leave the range Python can
represent (timestamps at or beyond the years 1 and 9999) are guarded to NULL, as are time-only
strings cast to timestamps (Spark would date them today, so results would not be
reproducible). The tests compare every result with a plain-Python reference
(``tests/boxes/expressions/reference``).
"""

from __future__ import annotations

from functools import singledispatch
from typing import Any

from boxes import levels
from boxes.expressions import functions, guards
from boxes.expressions import nodes as n
from boxes.expressions import sqlvalues as sv
from boxes.expressions.checker import LEVEL_FIELD
from boxes.types import DataType


def to_column(node: n.Node):
    from pyspark.sql import functions as F  # Spark is needed only when a query is built.

    return _build(node, F)


def _typed_lit(F, value: Any, kind: DataType):
    if value is None:
        return F.lit(None).cast(kind.spark_type())
    if kind is DataType.TIMESTAMP:
        return F.timestamp_micros(F.lit(sv.to_micros(value)).cast("bigint"))
    return F.lit(value).cast(kind.spark_type())


@singledispatch
def _build(node: n.Node, F):
    raise TypeError(f"no column builder for {type(node).__name__}")


@_build.register
def _(node: n.Lit, F):
    return _typed_lit(F, node.value, node.type)


@_build.register
def _(node: n.Ref, F):
    if node.name == LEVEL_FIELD:
        return levels.level_word()
    return F.col(node.name)


_ARITH = {
    "+": "try_add",
    "-": "try_subtract",
    "*": "try_multiply",
    "/": "try_divide",
    "%": "try_mod",
}


@_build.register
def _(node: n.Arith, F):
    return getattr(F, _ARITH[node.op])(_build(node.left, F), _build(node.right, F))


@_build.register
def _(node: n.Neg, F):
    operand = _build(node.operand, F)
    if node.type is DataType.LONG:
        return F.try_subtract(F.lit(0).cast("bigint"), operand)
    return F.negative(operand)


@_build.register
def _(node: n.Shift, F):
    micros = F.try_add(F.unix_micros(_build(node.operand, F)), F.lit(node.micros).cast("bigint"))
    return guards.timestamp_from_micros(F, micros)


@_build.register
def _(node: n.Elapsed, F):
    micros = F.unix_micros(_build(node.left, F)) - F.unix_micros(_build(node.right, F))
    return micros.cast("double") / F.lit(1_000_000.0)


_COMPARE = {
    "=": "__eq__",
    "!=": "__ne__",
    "<": "__lt__",
    "<=": "__le__",
    ">": "__gt__",
    ">=": "__ge__",
    "<=>": "eqNullSafe",
}


@_build.register
def _(node: n.Compare, F):
    return getattr(_build(node.left, F), _COMPARE[node.op])(_build(node.right, F))


@_build.register
def _(node: n.Logic, F):
    left, right = _build(node.left, F), _build(node.right, F)
    return left & right if node.op == "AND" else left | right


@_build.register
def _(node: n.Not, F):
    return ~_build(node.operand, F)


@_build.register
def _(node: n.IsNull, F):
    operand = _build(node.operand, F)
    return operand.isNotNull() if node.negated else operand.isNull()


def _maybe_not(column, negated: bool):
    return ~column if negated else column


@_build.register
def _(node: n.In, F):
    items = [_build(item, F) for item in node.items]
    return _maybe_not(_build(node.operand, F).isin(*items), node.negated)


@_build.register
def _(node: n.Between, F):
    column = _build(node.operand, F).between(_build(node.low, F), _build(node.high, F))
    return _maybe_not(column, node.negated)


@_build.register
def _(node: n.Like, F):
    return _maybe_not(_build(node.operand, F).like(node.pattern), node.negated)


@_build.register
def _(node: n.Case, F):
    (condition, value), *rest = node.branches
    column = F.when(_build(condition, F), _build(value, F))
    for condition, value in rest:
        column = column.when(_build(condition, F), _build(value, F))
    return column.otherwise(_build(node.default, F))


@_build.register
def _(node: n.Cast, F):
    operand = _build(node.operand, F)
    if node.type is DataType.TIMESTAMP:
        return guards.to_timestamp(F, operand, node.operand.type is DataType.STRING)
    return operand.try_cast(node.type.spark_type())


def _literal(node: n.Node) -> Any:
    assert isinstance(node, n.Lit), node  # the checker takes only a constant there
    return node.value


@_build.register
def _(node: n.Call, F):
    spec = functions.FUNCTIONS[node.name]
    args = [
        _literal(arg) if i in spec.literals else _build(arg, F) for i, arg in enumerate(node.args)
    ]
    if spec.typed:
        args.insert(0, node.args[0].type)
    return spec.spark(F, *args).cast(node.type.spark_type())
