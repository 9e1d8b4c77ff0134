"""A policy's predicate, bound to a subject (``self.NAME``) and to a point of a plan.

The text is parsed by the expression language's own parser; every name in it is replaced,
by its position in the parse tree (never by searching the text), with a literal of the
subject's attribute or with the name a stream's field has at the point where the predicate
is applied. The result is plain expression text, which the document's validator checks like
any other filter.

>>> bind("SID in (self.ships) and AIS.Lat > 1.2", ("AIS",), {"ships": [7, 9]},
...      lambda stream, name: "left_" + name)
'left_SID in (7, 9) and left_Lat > 1.2'
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from boxes.expressions.parser import parse

SELF = "self"
Resolve = Callable[[str, str], str | None]


class Unbound(Exception):
    """The predicate cannot be stated here: a subject attribute or a field is missing."""


def check_policy_predicate(text: str, streams: Sequence[str]) -> str | None:
    """Why ``text`` cannot be a policy's predicate over ``streams``, or None."""
    refs, problem = _parsed(text)
    if problem:
        return problem
    for parts, _, _ in refs:
        if parts[0] == SELF:
            if len(parts) != 2:
                return f"{'.'.join(parts)!r}: a subject attribute is written self.NAME"
        elif len(parts) == 2:
            if parts[0] not in streams:
                return f"{'.'.join(parts)!r} names no stream of the policy ({', '.join(streams)})"
        elif len(parts) == 1:
            if len(streams) > 1:
                return f"{parts[0]!r}: in a policy on several streams write STREAM.FIELD"
        else:
            return f"{'.'.join(parts)!r} is not a field, STREAM.FIELD or self.NAME"
    return None


def bind(
    text: str, streams: Sequence[str], attributes: Mapping[str, Any] | None, resolve: Resolve
) -> str:
    """``text`` with subject attributes as literals and fields as ``resolve`` names them;
    ``attributes`` None: each ``self.NAME`` an untyped NULL (checking a policy before any
    subject is known, its types come from the fields it meets).

    Raises Unbound when the subject lacks an attribute (or it has no literal form) or a
    field has no name at this point (``resolve`` returned None).
    """
    refs, problem = _parsed(text)
    if problem:
        raise Unbound(problem)
    pieces: list[tuple[int, int, str]] = []
    for parts, start, end in refs:
        if parts[0] == SELF:
            if attributes is None:
                value = "NULL"
            elif parts[1] not in attributes:
                raise Unbound(f"the subject has no attribute {parts[1]!r}")
            else:
                value = literal(attributes[parts[1]])
        else:
            stream, name = (parts[0], parts[1]) if len(parts) == 2 else (streams[0], parts[0])
            found = resolve(stream, name)
            if found is None:
                raise Unbound(f"{stream}.{name} is not available at this point of the plan")
            value = found
        pieces.append((start, end, value))
    out = text
    for start, end, value in sorted(pieces, reverse=True):
        out = out[:start] + value + out[end:]
    return out


def literal(value: Any) -> str:
    """An attribute value as expression text; a list becomes the items of an ``IN (...)``."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value) if value >= 0 else f"({value})"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Unbound("an attribute is not a finite number")
        return repr(value) if value >= 0 else f"({value!r})"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, (list, tuple)):
        if any(isinstance(v, (list, tuple)) for v in value):
            raise Unbound("an attribute's list holds lists")
        return ", ".join(literal(v) for v in value) if value else "NULL"
    raise Unbound(f"an attribute of type {type(value).__name__} has no literal form")


@lru_cache(maxsize=4096)
def _parsed(text: str) -> tuple[tuple[tuple[list[str], int, int], ...], str | None]:
    """(name parts, start, end) of every field reference (not function names), or why the
    text does not parse; cached, since a deploy binds each policy at several points."""
    tree, problems = parse(text, "where")
    if problems or tree is None:
        return (), "; ".join(p.message for p in problems)
    return tuple(
        ([str(t) for t in sub.children[0].children], sub.meta.start_pos, sub.meta.end_pos)
        for sub in tree.iter_subtrees()
        if sub.data == "ref"
    ), None
