"""How deep untrusted input may nest: one limit for every nested thing a user sends.

Expressions, CQL scripts, diagram documents (YAML, or JSON in a request body), policy XML and
the other JSON bodies of the control API all nest, and the code that reads each of them
recurses (a parser, a tree walk, a validator). Deep enough, any of them would exhaust Python's
stack and answer 500 instead of a reason. So each is measured *before* anything recurses over
it, without recursing itself, and refused with ``TOO_DEEP``, which names the limit and what
was too deep. A diagram needs about six levels (boxes > name > window > size), an expression
a dozen; the rest is headroom.

>>> too_deep_at("(" * 64 + "'(('" + ")" * 64) is None
True
>>> too_deep_at("x + " + "(" * 65)
68
>>> nests_too_deep([[1], {"a": [[]]}], json_children), nests_too_deep(None, json_children)
(False, False)
>>> too_deep("the expression", "at column 65")
'the expression nests deeper than the limit of 64 levels (at column 65)'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from boxes import codes

MAX_DEPTH = 64
_BRACKETS = re.compile(r"[()\[\]{}]")
_SQL_STRING = re.compile(r"'(?:[^']|'')*'")


def too_deep(what: str, where: str = "") -> str:
    """The message of ``TOO_DEEP`` for ``what``, and ``where`` in it if known."""
    message = codes.TOO_DEEP.render(what=what, limit=MAX_DEPTH)
    return f"{message} ({where})" if where else message


def too_deep_at(text: str) -> int | None:
    """Where the brackets of ``text`` first nest deeper than ``MAX_DEPTH`` (an offset), outside
    single-quoted strings (``''`` inside); None if they never do. A scan of the text, before
    any parser sees it."""
    blanked = _SQL_STRING.sub(lambda m: " " * len(m.group()), text)
    depth = 0
    for found in _BRACKETS.finditer(blanked):
        depth += 1 if found.group() in "([{" else -1
        if depth > MAX_DEPTH:
            return found.start()
    return None


def nests_too_deep(root: Any, children: Callable[[Any], Iterable[Any]]) -> bool:
    """Whether a tree whose inner nodes ``children`` lists is deeper than ``MAX_DEPTH``; a walk
    level by level that stops at the limit, so a tree of any depth is measured."""
    level, depth = [root], 1
    while level:
        if depth > MAX_DEPTH:
            return True
        level = [child for node in level for child in children(node)]
        depth += 1
    return False


def json_children(value: Any) -> Iterable[Any]:
    """The mappings and lists inside a JSON value (a scalar has none)."""
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return [v for v in items if isinstance(v, (dict, list))]
