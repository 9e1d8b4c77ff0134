"""Text to parse tree: size limits, the hostile-syntax screen, then the LALR grammar.

The screen runs first, over the text with string literals blanked out, so a subquery, a
comment or a backtick is answered with FORBIDDEN_SYNTAX rather than a generic syntax error,
and a ``;`` inside a string is never mistaken for one. Depth is measured without recursion,
so a pathological input cannot exhaust the Python stack before it is refused.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import lark

from boxes import codes
from boxes.errors import Problem, kind_of
from boxes.limits import nests_too_deep, too_deep, too_deep_at

MAX_LENGTH = 4096
_STRING = re.compile(r"'(?:[^']|'')*'")
_SYNTAX, _FUNCTION = codes.FORBIDDEN_SYNTAX, codes.FORBIDDEN_FUNCTION
_SCREEN: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (
        re.compile(r"\bselect\b", re.I),
        _SYNTAX,
        "subqueries are not allowed: an expression reads only the fields of its input tuple",
    ),
    (re.compile(r"--|/\*|\*/"), _SYNTAX, "comments are not allowed"),
    (
        re.compile(r"`"),
        _SYNTAX,
        "backtick-quoted names are not allowed: field names are plain identifiers",
    ),
    (re.compile(r";"), _SYNTAX, "';' is not allowed: an expression is a single expression"),
    (re.compile(r"->"), _SYNTAX, "lambda functions are not allowed"),
    (re.compile(r"[\[\]{}]"), _SYNTAX, "array, map and struct values are not allowed"),
    (
        re.compile(r'"'),
        _SYNTAX,
        "double quotes are not allowed: write strings in single quotes ('text')",
    ),
    (
        re.compile(
            r"\b(array|map|struct|named_struct|map_from_arrays|map_from_entries"
            r"|array_repeat|sequence)\s*\(",
            re.I,
        ),
        _SYNTAX,
        "array, map and struct constructors are not allowed",
    ),
    (
        re.compile(r"\b[A-Za-z_]\w*(\s*\.\s*[A-Za-z_]\w*)+\s*\("),
        _FUNCTION,
        "qualified function names (Java classes, catalogs) are not allowed",
    ),
)
_TOKEN_NAMES = {
    "INT": "an integer",
    "FLOAT": "a number",
    "STRING": "a 'string'",
    "NAME": "a name",
    "LPAR": "'('",
    "RPAR": "')'",
    "COMMA": "','",
    "DOT": "'.'",
    "MINUS": "'-'",
    "PLUS": "'+'",
    "MUL_OP": "'*', '/' or '%'",
    "COMP_OP": "a comparison",
    "$END": "the end of the text",
}


@lru_cache(maxsize=1)
def _parser() -> lark.Lark:
    grammar = Path(__file__).with_name("grammar.lark").read_text(encoding="utf-8")
    return lark.Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=True)


def parse(text: str, path: str) -> tuple[lark.Tree | None, list[Problem]]:
    """Return the parse tree of ``text`` or the problems that stop it from being one.

    Cached: a deploy validates the same expressions again (a rewritten plan, seed 002), and
    parsing is most of the cost. Trees are only read, never changed, so they can be shared.
    """
    if not isinstance(text, str):
        return _parse(text, path)
    tree, problems = _cached(text, path)
    return tree, list(problems)


@lru_cache(maxsize=4096)
def _cached(text: str, path: str) -> tuple[lark.Tree | None, tuple[Problem, ...]]:
    tree, problems = _parse(text, path)
    return tree, tuple(problems)


def _parse(text: str, path: str) -> tuple[lark.Tree | None, list[Problem]]:
    if not isinstance(text, str):
        return None, [
            Problem(codes.EXPR_SYNTAX, path, f"an expression must be text; got {kind_of(text)}")
        ]
    if len(text) > MAX_LENGTH:
        return None, [
            Problem(
                codes.EXPR_TOO_LONG,
                path,
                f"the expression has {len(text)} characters; the limit is {MAX_LENGTH}",
            )
        ]
    if not text.strip():
        return None, [Problem(codes.EXPR_SYNTAX, path, "the expression is empty")]
    problem = _screen(text, path)
    if problem:
        return None, [problem]
    at = too_deep_at(text)
    if at is not None:
        where = f"at column {at + 1}"
        return None, [Problem(codes.TOO_DEEP, path, too_deep("the expression", where))]
    try:
        tree = _parser().parse(text)
    except lark.exceptions.UnexpectedInput as exc:
        return None, [_syntax_problem(text, exc, path)]
    if nests_too_deep(tree, _subtrees):
        return None, [Problem(codes.TOO_DEEP, path, too_deep("the expression"))]
    return tree, []


def _screen(text: str, path: str) -> Problem | None:
    blanked = _STRING.sub(lambda m: "'" + " " * (len(m.group()) - 2) + "'", text)
    for pattern, code, why in _SCREEN:
        found = pattern.search(blanked)
        if found:
            return Problem(
                code, path, f"{why}; found {found.group().strip()!r} at column {found.start() + 1}"
            )
    return None


def _syntax_problem(text: str, exc: lark.exceptions.UnexpectedInput, path: str) -> Problem:
    where = f"at column {exc.column}" if exc.column and exc.column > 0 else "at the end"
    if isinstance(exc, lark.exceptions.UnexpectedToken):
        token = exc.token
        if token.type == "MUL_OP" and token.value == "*":
            return Problem(
                codes.FORBIDDEN_SYNTAX,
                path,
                f"'*' {where} is only multiplication here; there is no star selection "
                "(write count() to count rows)",
            )
        found = "the end of the text" if token.type == "$END" else f"{str(token.value)!r} {where}"
        expected = sorted({_TOKEN_NAMES.get(name, name) for name in exc.expected})
        return Problem(
            codes.EXPR_SYNTAX, path, f"unexpected {found}; expected {', '.join(expected)}"
        )
    pos = exc.pos_in_stream or 0
    char = text[pos : pos + 1]
    hint = " (unterminated string?)" if char == "'" else ""
    return Problem(codes.EXPR_SYNTAX, path, f"unexpected character {char!r} {where}{hint}")


def _subtrees(node: lark.Tree) -> list[lark.Tree]:
    return [child for child in node.children if isinstance(child, lark.Tree)]
