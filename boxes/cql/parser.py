"""CQL text to its typed tree (``ast.py``), or a CQL_SYNTAX problem at its line and column.

A problem states its position once, in its path (``cql.LINE.COLUMN``, which the editor shows
as "line 2, column 14" and puts the cursor at), and a syntax error says in words what could
come there (``_expected``), never the grammar's token names.

The papers write strings in double quotes (``msgType = "send"``); the expression language
takes single quotes only. A double-quoted string without a quote inside becomes the same
string in single quotes, in place (same length, so every position stays right); one with a
quote inside is refused. Nothing else in the text is rewritten.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import lark

from boxes import codes
from boxes.cql import ast
from boxes.errors import DiagramInvalid, Problem
from boxes.expressions.aggregates import AGGREGATES
from boxes.limits import too_deep, too_deep_at

MAX_LENGTH = 1 << 16
_QUOTED = re.compile(r"'(?:[^']|'')*'|\"[^\"]*\"")
_E = "grammar__"  # the prefix lark gives the expression language's rules


@lru_cache(maxsize=1)
def _parser() -> lark.Lark:
    here = Path(__file__).parent
    return lark.Lark(
        (here / "grammar.lark").read_text(encoding="utf-8"),
        parser="lalr",
        import_paths=[str(here.parent / "expressions")],
        propagate_positions=True,
        maybe_placeholders=True,
    )


def fail(code: codes.Code, pos: ast.Pos | None, message: str) -> DiagramInvalid:
    """The one way the CQL modules report a problem: its code, position (the path) and
    message."""
    return DiagramInvalid([Problem(code, pos.path if pos else "cql", message)])


def parse(text: str) -> ast.Script:
    """The script's tree; DiagramInvalid (CQL_SYNTAX and others) if it is not one."""
    if not isinstance(text, str) or not text.strip():
        raise fail(codes.CQL_SYNTAX, ast.Pos(1, 1), "the query is empty")
    if len(text) > MAX_LENGTH:
        raise fail(codes.CQL_SYNTAX, ast.Pos(1, 1), f"the text is longer than {MAX_LENGTH}")
    text = _single_quoted(text)
    at = too_deep_at(text)
    if at is not None:
        raise fail(codes.TOO_DEEP, _pos_of(text, at), too_deep("the script"))
    try:
        tree = _parser().parse(text)
    except lark.exceptions.UnexpectedInput as exc:
        raise _syntax(text, exc) from None
    return _Builder(text).script(tree)


def _single_quoted(text: str) -> str:
    out, last = [], 0
    for match in _QUOTED.finditer(text):
        literal = match.group()
        if literal.startswith('"'):
            if "'" in literal:
                raise fail(
                    codes.CQL_SYNTAX,
                    _pos_of(text, match.start()),
                    "a double-quoted string may not hold a quote; write it in single quotes "
                    "with '' for a quote",
                )
            out.append(text[last : match.start()] + "'" + literal[1:-1] + "'")
            last = match.end()
    return "".join(out) + text[last:]


def _pos_of(text: str, offset: int) -> ast.Pos:
    line = text.count("\n", 0, offset) + 1
    return ast.Pos(line, offset - (text.rfind("\n", 0, offset) + 1) + 1)


def _syntax(text: str, exc: lark.exceptions.UnexpectedInput) -> DiagramInvalid:
    pos = ast.Pos(max(exc.line, 1), max(exc.column, 1))
    if isinstance(exc, lark.exceptions.UnexpectedToken):
        expected = _expected(exc.expected, _accepted(exc))
        if exc.token.type == "$END":
            return fail(
                codes.CQL_SYNTAX, _pos_of(text, len(text)), f"the query ends too early: {expected}"
            )
        return fail(codes.CQL_SYNTAX, pos, f"{expected}, found {exc.token.value!r}")
    char = text[exc.pos_in_stream : exc.pos_in_stream + 1] if exc.pos_in_stream else ""
    return fail(codes.CQL_SYNTAX, pos, f"found {char!r}, which is no part of CQL")


# What a terminal of the grammar is, in words; a terminal not named here is a keyword, which
# is written as the query writes it.
_WORDS = {
    "NAME": "a name",
    "INT": "a whole number",
    "DURATION": "a duration (10s, 500ms, 2m)",
    "UNIT": "a unit of time (seconds, minutes, ...)",
    "COUNT_STAR": "count(*)",
    "BOTTOM": "⊥",
    "SIGN_VALUE": "POSITIVE or NEGATIVE",
    "BOOL": "TRUE or FALSE",
    "STAR": "'*'",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "COMMA": "','",
    "DOT": "'.'",
    "SEMICOLON": "';'",
    "COLON": "':'",
    "EQUAL": "'='",
    "$END": "the end of the query",
}
# The expression language's: what may start a value, and what may follow one. When one of
# them is expected, the group is named instead of its members.
_VALUE = {"STRING", "FLOAT", "NULL", "TRUE", "FALSE", "CASE", "CAST", "INTERVAL", "LEVEL"}
_OPERATOR = {"COMP_OP", "PLUS", "MUL_OP", "OR", "NOT", "IN", "IS", "BETWEEN", "LIKE"}
_CASE = {"WHEN", "THEN", "ELSE", "END"}  # LALR offers them wherever an expression may end


def _accepted(exc: lark.exceptions.UnexpectedToken) -> set[str]:
    """The terminals the parser, in its state at the error, would really take next (LALR's
    expected set also holds those of states merged with it), or none if it cannot tell."""
    try:
        return set(exc.interactive_parser.accepts())
    except lark.exceptions.LarkError:
        return set()


def _expected(terminals, accepted: set[str]) -> str:
    """What may come, as a person lists it ("expected an expression, FROM or ','"). ``accepted``,
    when known, narrows the grammar's own keywords and punctuation: the expression language's
    terminals are judged from ``terminals``, which is all accepts() misses."""
    if accepted:
        terminals = accepted | {t for t in terminals if t.startswith(_E)}
    names = {t.removeprefix(_E) for t in terminals}
    words = []
    if names & _VALUE or {"NAME", "LPAR"} <= names:
        names -= _VALUE | {"INT", "NAME", "LPAR", "MINUS", "TIMESTAMP"}
        words.append("an expression")
    if names & _OPERATOR:
        names -= _OPERATOR | {"MINUS", "AND", "DOT", "LPAR"}
        words.append("an operator")
    if accepted:
        names -= _CASE
    words = sorted(_WORDS.get(n, n) for n in names) + words
    if not words:  # lark could not tell
        return "the query is not complete"
    return "expected " + (
        words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"
    )


def _pos(item) -> ast.Pos:
    if isinstance(item, lark.Token):
        return ast.Pos(item.line or 1, item.column or 1)
    return ast.Pos(item.meta.line, item.meta.column)


def _terms(node) -> list:
    """The top-level AND terms of an expression tree (itself if it is not an AND)."""
    if isinstance(node, lark.Tree) and node.data == _E + "and_":
        left, _and, right = node.children
        return _terms(left) + _terms(right)
    return [node]


class _Builder:
    """Walks lark's tree into ``ast`` nodes (explicitly, rule by rule)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def script(self, tree: lark.Tree) -> ast.Script:
        name, streams, queries, punctuations, views = None, [], [], [], []
        for stmt in tree.children:
            if stmt.data == "create_diagram":
                name = str(stmt.children[2])
            elif stmt.data == "create_stream":
                streams.append(self.create_stream(stmt))
            elif stmt.data == "create_view":
                _create, _view, view, _as, union = stmt.children
                views.append(ast.View(str(view), self.selects(union), _pos(stmt)))
            elif stmt.data == "query_statement":
                queries.append(self.query(stmt))
            else:
                punctuations.append(self.punctuation(stmt))
        return ast.Script(name, tuple(streams), tuple(queries), tuple(punctuations), tuple(views))

    def create_stream(self, node) -> ast.CreateStream:
        _, _, name, *columns, _event, _time, event_time, _lateness, lateness = node.children
        return ast.CreateStream(
            str(name),
            tuple(ast.Column(str(c.children[0]), str(c.children[1]).lower()) for c in columns),
            str(event_time) if event_time else None,
            self.duration(lateness) if lateness else None,
            _pos(node),
        )

    def query(self, node) -> ast.Query:
        _insert, _into, output, relation, on_result, at_level, semantic = node.children
        stream, union = (
            (relation.data, relation.children[1])
            if relation.data != "union"
            else (
                "istream",
                relation,
            )
        )
        return ast.Query(
            str(output) if output else None,
            str(stream),
            self.selects(union),
            tuple(self.punctuation(p) for p in on_result.children[2:]) if on_result else (),
            self.level(at_level.children[2]) if at_level else None,
            _pos(relation),
            str(semantic.children[1]).lower() if semantic else None,
        )

    def selects(self, union) -> tuple[ast.Select, ...]:
        return tuple(self.select(s) for s in union.children if isinstance(s, lark.Tree))

    def select(self, node) -> ast.Select:
        _s, items, _f, sources, _w, where, _g, _b, group, _h, having = node.children
        kind = sources.data
        froms = [c for c in sources.children if isinstance(c, lark.Tree) and c.data != "expr"]
        froms = [c for c in froms if c.data.startswith("from_item")]
        on = sources.children[-1] if kind == "join" else None
        return ast.Select(
            self.select_list(items),
            tuple(self.source(f) for f in froms),
            self.expr(on) if on is not None else None,
            self.expr(where) if where is not None else None,
            tuple(str(n) for n in group.children) if group else (),
            self.expr(having) if having is not None else None,
            _pos(node),
            comma_join=kind == "cross",
            where_terms=tuple(self.expr(t) for t in _terms(where)) if where is not None else (),
        )

    def select_list(self, node) -> tuple[ast.SelectItem, ...] | None:
        if isinstance(node.children[0], lark.Token) and node.children[0].type == "STAR":
            return None
        return tuple(self.select_item(item) for item in node.children)

    def select_item(self, node) -> ast.SelectItem:
        value, _as, name = node.children
        alias = str(name) if name else None
        if isinstance(value, lark.Token):  # COUNT(*)
            return ast.SelectItem(ast.Expr("count()", _pos(value)), alias, "count", None)
        expr = self.expr(value)
        if value.data == _E + "ref" and expr.text.lower() == "count":  # SIF-CQL's bare COUNT
            return ast.SelectItem(ast.Expr("count()", expr.pos), alias, "count", None)
        if value.data == _E + "call":
            fname = self.slice(value.children[0]).lower()
            arguments = [a for a in value.children[1:] if a is not None]
            if fname in AGGREGATES and len(arguments) <= 1:
                argument = self.expr(arguments[0]) if arguments else None
                return ast.SelectItem(expr, alias, fname, argument)
        return ast.SelectItem(expr, alias)

    def source(self, node) -> ast.Source:
        if node.data == "from_item_late_alias":
            stream, window, alias = node.children
        else:
            stream, alias, window = node.children
        name = str(alias.children[-1]) if alias else str(stream)
        return ast.Source(str(stream), name, self.window(window) if window else None, _pos(node))

    def window(self, node) -> ast.Window:
        body, pos = node.children[0], _pos(node)
        kind, c = body.data, body.children
        if kind == "range":
            return ast.Window(
                "range", pos, size=self.duration(c[1]), slide=self.duration(c[3]) if c[3] else None
            )
        if kind in ("now", "unbounded"):
            return ast.Window(kind, pos)
        if kind == "rows":
            _rows, n, _slide, m, level = c
            return ast.Window(
                "rows", pos, rows=int(n), slide=int(m) if m else None, level=self.filter(level)
            )
        _p, _by, names, _rows, n, _slide, m, level = c
        return ast.Window(
            "partition",
            pos,
            rows=int(n),
            slide=int(m) if m else None,
            partition=tuple(str(x) for x in names.children),
            level=self.filter(level),
        )

    def filter(self, node) -> ast.Level | None:
        return self.level(node.children[-1]) if node is not None else None

    def level(self, node) -> ast.Level:
        named = [p.children[0] is not None for p in node.children]
        parts = tuple(str(p.children[1]) for p in node.children)
        if not any(named):
            return ast.Level(parts, _pos(node))
        if not all(named):
            raise fail(
                codes.CQL_SYNTAX,
                _pos(node),
                "a level either names every class ([banks: A, oil: T]) or none ([A, T])",
            )
        classes = tuple(str(p.children[0]) for p in node.children)
        return ast.Level(parts, _pos(node), classes)

    def duration(self, node) -> str:
        """A duration as the document writes it: ``10 SECONDS`` and ``10s`` are both '10s'."""
        if len(node.children) == 1:
            return str(node.children[0]).lower()
        number, unit = node.children
        unit = str(unit).lower().rstrip("s") or "s"
        short = {"millisecond": "ms", "second": "s", "minute": "m", "hour": "h", "day": "d"}
        return f"{number}{short[unit]}"

    def punctuation(self, node) -> ast.SecurityPunctuation:
        c = node.children
        names = [x for x in c if isinstance(x, lark.Token) and x.type == "NAME"]
        assignments = [x for x in c if isinstance(x, lark.Tree) and x.data == "assignment"]
        stream_at = next(
            i for i, x in enumerate(c) if isinstance(x, lark.Token) and x.type == "STREAM"
        )
        stream = c[stream_at + 1] if stream_at + 1 < len(c) else None
        sp_name = names[0] if names and names[0] is not stream else None
        values: dict = {
            "tuples": None,
            "all_tuples": False,
            "attributes": None,
            "model": None,
            "role": None,
            "grant": False,
            "sign": None,
            "immutable": None,
        }
        for a in assignments:
            self.assign(a, values)
        return ast.SecurityPunctuation(
            str(sp_name) if sp_name else None,
            str(stream) if isinstance(stream, lark.Token) else None,
            pos=_pos(node),
            **values,
        )

    def assign(self, node, values: dict) -> None:
        parts = [x for x in node.children if x is not None]
        key, value = parts[-2], parts[-1]
        kind = key.type
        if kind == "SIGN":
            values["sign"] = str(value).upper()
        elif kind == "IMMUTABLE":
            values["immutable"] = str(value).lower() == "true"
        elif kind == "SRP":
            model, role, *grant = value.children
            values.update(model=str(model), role=str(role), grant=any(g for g in grant))
        else:
            for part in (p for p in value.children if isinstance(p, lark.Tree)):
                target = part.children[-1]
                leaves = [str(t) for t in target.scan_values(lambda _: True)]
                if part.data == "ddp_tuples":
                    numbers = [int(v) for v in leaves if v.isdigit()]
                    values["all_tuples"] = not numbers
                    values["tuples"] = (numbers[0], numbers[1]) if numbers else None
                else:
                    names = [v for v in leaves if v.upper() != "ALL"]
                    values["attributes"] = tuple(names) if names else None

    def slice(self, node) -> str:
        return self.text[node.meta.start_pos : node.meta.end_pos]

    def expr(self, node) -> ast.Expr:
        """The expression's text with its qualified names (``R.timestamp``) marked for the
        compiler, which knows what each alias stands for."""
        start = node.meta.start_pos
        refs = []
        for sub in node.iter_subtrees():
            if sub.data == _E + "dotted" and len(sub.children) == 2:
                alias, field = (str(t) for t in sub.children)
                refs.append((sub.meta.start_pos - start, sub.meta.end_pos - start, alias, field))
        return ast.Expr(self.slice(node), _pos(node), tuple(sorted(refs)))
