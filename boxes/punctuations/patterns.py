"""The pattern expressions of seed 003's Figure 5, and ``eval(N, V, E)`` as a match test.

A pattern describes a set of streams, tuple identifiers, attributes or roles:

=========  =======================  ==========================================
paper      JSON                     matches
=========  =======================  ==========================================
``∅``      ``[]``                   nothing
``*``      ``"*"``                  anything
``c``      ``c`` (string, number)   only ``c``
``(a,b)``  ``{"exclusive": [a, b]}``  numbers strictly between ``a`` and ``b``
``[a,b]``  ``{"inclusive": [a, b]}``  numbers from ``a`` to ``b``, both included
``{a,b}``  ``[a, b]``               the members
=========  =======================  ==========================================

Ranges are over numbers only (the paper orders no names); a string never falls in one, and a
number never equals a string. ``True``/``False`` are not values (JSON's booleans are no ids).

>>> p = from_json({"inclusive": [120, 133]})
>>> p.notation(), p.matches(120), p.matches(134), p.matches("120")
('[120, 133]', True, False, False)
>>> from_json(["s1", "s2"]).notation(), from_json("*").matches("anything")
('{s1, s2}', True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from boxes.errors import kind_of

Scalar = str | int | float

EMPTY, ANY, CONST, EXCLUSIVE, INCLUSIVE, SET = (
    "empty",
    "any",
    "const",
    "exclusive",
    "inclusive",
    "set",
)
MAX_MEMBERS = 1024
MAX_TEXT = 256


class PatternError(ValueError):
    """A JSON value that is no pattern; the message says why (the caller adds where)."""


@dataclass(frozen=True)
class Pattern:
    """One of Figure 5's six forms; ``values`` holds the constant, the bounds or the members."""

    kind: str
    values: tuple[Scalar, ...] = ()

    def matches(self, value: Any) -> bool:
        """``value ∈ eval(N, V, self)``."""
        if self.kind == ANY:
            return True
        if not _is_scalar(value):
            return False
        if self.kind in (CONST, SET):
            return any(_same(value, v) for v in self.values)
        if self.kind in (EXCLUSIVE, INCLUSIVE) and _is_number(value):
            low, high = self.values
            if self.kind == INCLUSIVE:
                return bool(low <= value <= high)
            return bool(low < value < high)
        return False

    def notation(self) -> str:
        """The paper's way of writing it."""
        shown = ", ".join(str(v) for v in self.values)
        return {
            EMPTY: "∅",
            ANY: "*",
            CONST: shown,
            EXCLUSIVE: f"({shown})",
            INCLUSIVE: f"[{shown}]",
            SET: "{" + shown + "}",
        }[self.kind]

    def to_json(self) -> Any:
        """The JSON form ``from_json`` reads back to an equal pattern."""
        if self.kind == ANY:
            return "*"
        if self.kind == CONST:
            return self.values[0]
        if self.kind in (EMPTY, SET):
            return list(self.values)
        return {self.kind: list(self.values)}


WILDCARD = Pattern(ANY)
NOTHING = Pattern(EMPTY)


def const(value: Scalar) -> Pattern:
    return Pattern(CONST, (_scalar(value),))


def members(*values: Scalar) -> Pattern:
    """A set pattern; no members is ``∅``."""
    return Pattern(SET, tuple(_scalar(v) for v in values)) if values else NOTHING


def inclusive(low: float, high: float) -> Pattern:
    return Pattern(INCLUSIVE, _bounds(low, high))


def exclusive(low: float, high: float) -> Pattern:
    return Pattern(EXCLUSIVE, _bounds(low, high))


def from_json(value: Any) -> Pattern:
    """A pattern from its JSON form (table above); ``PatternError`` if it is none."""
    if value == "*":
        return WILDCARD
    if isinstance(value, list):
        if len(value) > MAX_MEMBERS:
            raise PatternError(f"a set holds at most {MAX_MEMBERS} members")
        return members(*(_scalar(v) for v in value))
    if isinstance(value, dict):
        if len(value) != 1 or next(iter(value)) not in (INCLUSIVE, EXCLUSIVE):
            raise PatternError('a range is {"inclusive": [low, high]} or {"exclusive": [...]}')
        ((kind, bounds),) = value.items()
        if not isinstance(bounds, list) or len(bounds) != 2:
            raise PatternError(f"{kind} takes a list of two numbers")
        return Pattern(kind, _bounds(*bounds))
    return const(_scalar(value))


def _bounds(low: Any, high: Any) -> tuple[Scalar, ...]:
    if not (_is_number(low) and _is_number(high)):
        raise PatternError("a range's bounds are numbers")
    if low > high:
        raise PatternError(f"the range's low end {low} is above its high end {high}")
    return (low, high)


def _scalar(value: Any) -> Scalar:
    if isinstance(value, str):
        if not value or len(value) > MAX_TEXT:
            raise PatternError(f"a name or value is 1 to {MAX_TEXT} characters")
        return value
    if _is_number(value):
        return value
    raise PatternError(f"{kind_of(value)} is not a value a pattern can hold")


def _is_number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return not isinstance(value, float) or math.isfinite(value)


def _is_scalar(value: Any) -> bool:
    return isinstance(value, str) or _is_number(value)


def _same(a: Scalar, b: Scalar) -> bool:
    """Equal and of the same kind: a string never equals a number."""
    return isinstance(a, str) == isinstance(b, str) and a == b
