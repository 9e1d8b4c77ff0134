"""The expression language of filter, map and aggregate boxes.

    >>> from boxes.types import parse_schema
    >>> schema, _ = parse_schema({"fields": {"price": "double", "qty": "long"}}, "s")
    >>> e = check_expression("price * qty", schema, "boxes.m.fields.total")
    >>> e.type.value, sorted(e.fields)
    ('double', ['price', 'qty'])

Checking is pure Python (lark and the schema) and needs no Spark; every problem is reported
at once as a ``DiagramInvalid`` whose problems carry the codes of group ``expression`` in
``boxes/codes/expression.py``. Spark
Columns are built from the checked tree with ``pyspark.sql.functions`` only, never from text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from boxes import codes
from boxes.errors import DiagramInvalid, Problem
from boxes.expressions import nodes as n
from boxes.expressions.aggregates import AGGREGATES
from boxes.expressions.checker import LEVEL_LATTICE, LEVEL_READABLE, Checker
from boxes.expressions.parser import parse
from boxes.types import DataType, Schema

__all__ = [
    "CheckedAggregate",
    "CheckedExpr",
    "check_aggregate",
    "check_expression",
    "check_predicate",
    "codes",
]


@dataclass(frozen=True)
class CheckedExpr:
    """An expression that passed every check, ready to become a Column."""

    text: str
    node: n.Node = field(repr=False)

    @property
    def type(self) -> DataType:
        return self.node.type

    @property
    def fields(self) -> frozenset[str]:
        found, stack = set(), [self.node]
        while stack:
            node = stack.pop()
            if isinstance(node, n.Ref):
                found.add(node.name)
            stack.extend(n.children(node))
        return frozenset(found)

    def to_column(self):
        from boxes.expressions.columns import to_column

        return to_column(self.node)


@dataclass(frozen=True)
class CheckedAggregate:
    """``function(argument)``; ``argument`` is None for ``count()``."""

    text: str
    function: str
    argument: CheckedExpr | None
    type: DataType

    @property
    def fields(self) -> frozenset[str]:
        return self.argument.fields if self.argument else frozenset()

    def to_column(self):
        from pyspark.sql import functions as F

        argument = self.argument.to_column() if self.argument else F.lit(1)
        return AGGREGATES[self.function].spark(F, argument).cast(self.type.spark_type())


def check_expression(text: str, schema: Schema, path: str) -> CheckedExpr:
    """Check a map expression (or any scalar expression) against ``schema``."""
    return CheckedExpr(text, _check(text, schema, path, codes.AGGREGATE_NOT_ALLOWED))


def check_predicate(text: str, schema: Schema, path: str) -> CheckedExpr:
    """Check a filter condition: an expression whose type is boolean."""
    checked = check_expression(text, schema, path)
    if checked.type is not DataType.BOOLEAN:
        raise DiagramInvalid(
            [
                Problem(
                    codes.TYPE_MISMATCH,
                    path,
                    f"a condition must be boolean; got {checked.type.value} ({text.strip()})",
                )
            ]
        )
    return checked


def check_aggregate(text: str, schema: Schema, path: str) -> CheckedAggregate:
    """Check ``count()``, ``count(x)``, ``sum(x)``, ``avg(x)``, ``min(x)`` or ``max(x)``."""
    tree, problems = parse(text, path)
    if problems or tree is None:
        raise DiagramInvalid(problems)
    checker = Checker(text, schema, path, codes.NESTED_AGGREGATE)
    name = _aggregate_name(tree)
    if name is None:
        raise DiagramInvalid(
            [
                Problem(
                    codes.NOT_AN_AGGREGATE,
                    path,
                    f"expected one of {', '.join(f'{a}(x)' for a in AGGREGATES)} or count(); "
                    f"got {text.strip()}",
                )
            ]
        )
    arguments = [c for c in tree.children[1:] if c is not None]
    if len(arguments) != 1 and not (name == "count" and not arguments):
        want = "0 or 1 argument" if name == "count" else "1 argument"
        raise DiagramInvalid(
            [Problem(codes.ARITY, path, f"{name}() takes {want}; got {len(arguments)}")]
        )
    argument = checker.top(arguments[0]) if arguments else None
    spec = AGGREGATES[name]
    if argument is not None and spec.numeric and not argument.type.is_numeric:
        checker.report(
            codes.TYPE_MISMATCH,
            f"{name}() needs a number; got {argument.type.value} ({checker.snippet(arguments[0])})",
        )
    if checker.problems:
        raise DiagramInvalid(checker.problems)
    kind = argument.type if argument else DataType.LONG
    return CheckedAggregate(
        text,
        name,
        CheckedExpr(checker.snippet(arguments[0]), argument) if argument else None,
        spec.result(kind),
    )


def _aggregate_name(tree) -> str | None:
    if tree.data != "call" or len(tree.children[0].children) != 1:
        return None
    name = str(tree.children[0].children[0]).lower()
    return name if name in AGGREGATES else None


def _check(text: str, schema: Schema, path: str, aggregate_code: str) -> n.Node:
    """The checked tree of ``text`` over ``schema``; cached, since a deploy checks the same
    expressions again (a rewritten plan checks every box and each policy at several points,
    seed 002). Checked trees are frozen, so they can be shared; whether ``_level`` may be read
    and the company bits a level literal takes are part of the key. A refusal is not cached:
    it is raised again with its own path."""
    if not isinstance(text, str):
        return _check_now(text, schema, path, aggregate_code)
    lattice = LEVEL_LATTICE.get()
    companies = None if lattice is None else (lattice.classes, tuple(lattice.bits.items()))
    return _checked(text, schema, path, aggregate_code, LEVEL_READABLE.get(), companies)


@lru_cache(maxsize=8192)
def _checked(
    text: str,
    schema: Schema,
    path: str,
    aggregate_code: str,
    level_readable: bool,
    companies: tuple | None,
) -> n.Node:
    return _check_now(text, schema, path, aggregate_code)


def _check_now(text: str, schema: Schema, path: str, aggregate_code: str) -> n.Node:
    tree, problems = parse(text, path)
    if problems or tree is None:
        raise DiagramInvalid(problems)
    checker = Checker(text, schema, path, aggregate_code)
    node = checker.top(tree)
    if checker.problems or node is None:
        raise DiagramInvalid(checker.problems)
    return node
