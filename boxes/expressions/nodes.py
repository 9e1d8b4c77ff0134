"""The checked expression tree: every node is typed, every implicit conversion is explicit.

The checker builds these; the Spark builder (and the tests' Python reference) read them. Because
promotions (long to double) and NULL typing are made explicit here, the two back ends need
no type rules of their own and so cannot disagree about them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from boxes.types import DataType


@dataclass(frozen=True)
class Node:
    type: DataType


@dataclass(frozen=True)
class Lit(Node):
    """A constant; ``value`` is None for a typed NULL, a naive UTC datetime for a timestamp."""

    value: Any


@dataclass(frozen=True)
class Ref(Node):
    name: str


@dataclass(frozen=True)
class Arith(Node):
    """``+ - * / %`` on operands of the node's type (``/`` on doubles only)."""

    op: str
    left: Node
    right: Node


@dataclass(frozen=True)
class Neg(Node):
    operand: Node


@dataclass(frozen=True)
class Shift(Node):
    """A timestamp moved by a whole number of microseconds (``ts + INTERVAL 5 SECONDS``)."""

    operand: Node
    micros: int


@dataclass(frozen=True)
class Elapsed(Node):
    """The seconds from ``right`` to ``left``, two timestamps (``t1 - t2``), as a double: a
    delay such as 000's Q6 computes."""

    left: Node
    right: Node


@dataclass(frozen=True)
class Compare(Node):
    """``= != < <= > >= <=>`` over two operands of one type."""

    op: str
    left: Node
    right: Node


@dataclass(frozen=True)
class Logic(Node):
    """Three-valued ``AND`` / ``OR``."""

    op: str
    left: Node
    right: Node


@dataclass(frozen=True)
class Not(Node):
    operand: Node


@dataclass(frozen=True)
class IsNull(Node):
    operand: Node
    negated: bool


@dataclass(frozen=True)
class In(Node):
    operand: Node
    items: tuple[Node, ...]
    negated: bool


@dataclass(frozen=True)
class Between(Node):
    operand: Node
    low: Node
    high: Node
    negated: bool


@dataclass(frozen=True)
class Like(Node):
    """``LIKE`` with a literal pattern (``%``, ``_``; backslash escapes them and itself)."""

    operand: Node
    pattern: str
    negated: bool


@dataclass(frozen=True)
class Case(Node):
    """Searched CASE; a simple CASE is checked into this form with ``=`` conditions."""

    branches: tuple[tuple[Node, Node], ...]
    default: Node


@dataclass(frozen=True)
class Cast(Node):
    """A conversion that yields NULL where the value does not convert (never an error)."""

    operand: Node


@dataclass(frozen=True)
class Call(Node):
    """An allow-listed scalar function; ``name`` is its key in ``functions.FUNCTIONS``."""

    name: str
    args: tuple[Node, ...]


def children(node: Node) -> tuple[Node, ...]:
    """The direct sub-expressions of a node, in source order."""
    if isinstance(node, (Arith, Elapsed, Compare, Logic)):
        return (node.left, node.right)
    if isinstance(node, (Neg, Shift, Not, IsNull, Like, Cast)):
        return (node.operand,)
    if isinstance(node, In):
        return (node.operand, *node.items)
    if isinstance(node, Between):
        return (node.operand, node.low, node.high)
    if isinstance(node, Case):
        return (*(n for pair in node.branches for n in pair), node.default)
    if isinstance(node, Call):
        return node.args
    return ()
