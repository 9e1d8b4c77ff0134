"""A CQL script's tree to a diagram document, plus where in the text each part came from.

The document is what Sluice validates, stores, deploys and shows; CQL is only another way to
write one. Each SELECT becomes a chain ``input -> WHERE (filter) -> aggregate or SELECT (map) ->
HAVING (filter)``; UNION joins chains with a union box; ``a JOIN b ON a.k = b.k`` over two
``[RANGE d]`` windows is a join box with ``within: d`` (two tuples meet while both are in their
windows); ``FROM a [ROWS n], b [ROWS m] WHERE ...`` is a join box with ``rows`` (ISTREAM: a tuple
entering its window pairs with the other side's window), each WHERE term about one side a
filter before that side's window, ``a.k = b.k`` the keys, the rest a filter on the pairs;
the query's output is ``INSERT INTO name`` (default ``out``). Boxes are named after
the output and their clause (``out_where``, ``out_agg``, ``out_1_where`` in a union's second
branch), so the same query always gives the same document. ``CREATE VIEW v AS ...`` compiles
the same way, its last box named ``v``, and ``FROM v`` in a later query or view reads that box:
so a union feeding an aggregate, or a box feeding two others, has a CQL form.

WHERE is CQL's, a filter on the window's relation: before a time window it is a filter box
(a tuple is in a time window by its own event time, so filtering first is the same); over a
count window it is the aggregate's ``where``, so ``[ROWS 100] WHERE p`` counts the tuples
satisfying p among the last 100. Only a diagram's *level* filters before any window (001).

Semantics that differ from STREAM's CQL, on purpose:
* ``[ROWS n]`` with GROUP BY is CQL's: the stream's last n tuples, grouped afterwards
  (``partitioned: false``); ``[PARTITION BY g ROWS n]`` keeps the last n tuples of each group.
* Without aggregates a window changes nothing: ISTREAM of ``S [RANGE d]`` is S itself.
* Only ISTREAM (append) runs: RSTREAM would re-send the whole relation at every instant
  (Spark's complete mode, with no event-time bound on state), DSTREAM would need retractions
  that append-only outputs and their subscribers cannot take back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from boxes import codes
from boxes.cql import ast
from boxes.cql.parser import fail
from boxes.errors import DiagramInvalid, InvalidInput, Problem
from boxes.levels import BOTTOM, TOP
from boxes.output import WEAK
from boxes.types import Schema

DEFAULT_OUTPUT = "out"
DEFAULT_NAME = "query"
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_QUALIFIED = re.compile(r"^[A-Za-z_]\w*\.[A-Za-z_]\w*$")
_AND = re.compile(r"\band\b", re.I)
_EQUAL = re.compile(r"^\s*(\w+)\.(\w+)\s*=\s*(\w+)\.(\w+)\s*$")


@dataclass
class Compiled:
    """The document, and the CQL position of each document path it has (for problems)."""

    document: dict[str, Any]
    positions: dict[str, ast.Pos] = field(default_factory=dict)

    def position_of(self, path: str) -> ast.Pos | None:
        """The position of the longest known prefix of a document path."""
        parts = path.split(".")
        for n in range(len(parts), 0, -1):
            found = self.positions.get(".".join(parts[:n]))
            if found is not None:
                return found
        return None


def compile_script(
    script: ast.Script,
    schemas: Mapping[str, Schema] | None = None,
    name: str | None = None,
    classes: Sequence[str] | None = None,
    derived: Mapping[str, Schema] | None = None,
) -> Compiled:
    """The diagram document of ``script``. ``schemas``: streams the caller knows (the catalog's
    on the server), used only to name a join's shared fields as the join box does. ``classes``:
    the conflict-of-interest classes in the catalog's order, which a level written by position
    (``[1, B]``, as the papers do) refers to. ``derived``: other diagrams' outputs the caller
    may read, by name; ``FROM`` one of them (when no stream has that name) reads it as a
    derived input (``output: NAME``)."""
    outputs = {n: s for n, s in (derived or {}).items() if n not in (schemas or {})}
    return _Compiler(script, {**outputs, **(schemas or {})}, classes, frozenset(outputs)).run(name)


def dominated(low: Mapping[str, str], high: Mapping[str, str]) -> bool:
    """Definition 4 of seed 000 on levels as mappings (a class left out is ⊥): per class the
    same company, ⊥ below, or T above."""
    return all(
        low.get(c, BOTTOM) in (high.get(c, BOTTOM), BOTTOM) or high.get(c) == TOP
        for c in set(low) | set(high)
    )


class _Compiler:
    def __init__(
        self,
        script: ast.Script,
        schemas: dict[str, Schema],
        classes: Sequence[str] | None,
        derived: frozenset[str],
    ) -> None:
        self.script = script
        self.schemas = schemas
        self.derived = derived
        self.classes = tuple(classes) if classes is not None else None
        self.inputs: dict[str, Any] = {}
        self.boxes: dict[str, Any] = {}
        self.outputs: dict[str, Any] = {}
        self.views: dict[str, str] = {}  # a view's name -> the box (or input) it stands for
        self.level: dict[str, str] | None = None
        self.out = Compiled({})

    def run(self, name: str | None) -> Compiled:
        script = self.script
        if script.punctuations:
            sp = script.punctuations[0]
            raise fail(
                codes.CQL_NOT_EXECUTABLE,
                sp.pos,
                codes.CQL_NOT_EXECUTABLE.render(
                    what="INSERT SP in a diagram's script",
                    reason="an sp is data its stream's writer sends in order with the tuples "
                    'it governs: send {"sp": "INSERT SP ..."} in the stream\'s batch '
                    "(docs/punctuations.md); a diagram's own results take ON RESULT",
                ),
            )
        if not script.queries:
            raise fail(codes.CQL_SYNTAX, ast.Pos(1, 1), "the script has no query (SELECT ...)")
        for stream in script.streams:
            self.declare(stream)
        for view in script.views:
            self.view(view)
        for query in script.queries:
            self.query(query)
        doc: dict[str, Any] = {"version": 1, "name": script.name or name or DEFAULT_NAME}
        if self.level is not None:
            doc["level"] = self.level
        doc.update(inputs=self.inputs, outputs=self.outputs)
        if self.boxes:
            doc["boxes"] = self.boxes
        self.out.document = doc
        return self.out

    def declare(self, stream: ast.CreateStream) -> None:
        schema: dict[str, Any] = {"fields": {c.name: c.type for c in stream.columns}}
        if stream.event_time:
            schema["event_time"] = stream.event_time
        spec: dict[str, Any] = {"schema": schema}
        if stream.lateness:
            spec["lateness"] = stream.lateness
        self.inputs[stream.name] = spec
        self.out.positions[f"inputs.{stream.name}"] = stream.pos
        from boxes.types import parse_schema

        parsed, problems = parse_schema(schema, f"inputs.{stream.name}.schema")
        if parsed is not None and not problems:
            self.schemas[stream.name] = parsed

    def query(self, query: ast.Query) -> None:
        output = query.output or DEFAULT_OUTPUT
        if query.stream != "istream":
            raise fail(
                codes.CQL_UNSUPPORTED,
                query.pos,
                codes.CQL_UNSUPPORTED.render(
                    reason=f"{query.stream.upper()}: only ISTREAM (append) runs; RSTREAM re-sends "
                    "the whole relation at every instant, DSTREAM needs retractions"
                ),
            )
        self.query_level(query.selects, query.level)
        if output in self.outputs:
            raise fail(
                codes.CQL_DUPLICATE_OUTPUT,
                query.pos,
                codes.CQL_DUPLICATE_OUTPUT.render(name=output),
            )
        self.outputs[output] = {"from": self.union(query.selects, f"{output}_", query.pos)}
        if query.semantic == WEAK:
            self.outputs[output]["semantic"] = WEAK
        if query.on_result:
            self.outputs[output]["on_result"] = on_result(query.on_result, output)
        self.out.positions[f"outputs.{output}"] = query.pos

    def union(self, selects: Sequence[ast.Select], prefix: str, pos: ast.Pos) -> str:
        """The last box of ``select UNION ...``: a union box of the branches' chains."""
        if len(selects) == 1:
            return self.select(selects[0], prefix)
        branches = [self.select(s, f"{prefix}{i}_") for i, s in enumerate(selects)]
        return self.add(f"{prefix}union", {"type": "union", "in": branches}, pos)

    def view(self, view: ast.View) -> None:
        """``CREATE VIEW name AS ...``: its chain, whose last box takes the view's name."""
        name = view.name
        if name in self.views or name in self.inputs or name in self.schemas:
            raise fail(
                codes.CQL_DUPLICATE_VIEW, view.pos, codes.CQL_DUPLICATE_VIEW.render(name=name)
            )
        self.query_level(view.selects, None)
        made = set(self.boxes)
        last = self.union(view.selects, f"{name}_", view.pos)
        if last in self.boxes and last not in made:
            if name in self.boxes:
                raise fail(
                    codes.CQL_DUPLICATE_VIEW, view.pos, codes.CQL_DUPLICATE_VIEW.render(name=name)
                )
            self.boxes[name] = self.boxes.pop(last)
            for path in [p for p in self.out.positions if p.split(".")[:2] == ["boxes", last]]:
                renamed = ".".join(["boxes", name, *path.split(".")[2:]])
                self.out.positions[renamed] = self.out.positions.pop(path)
            last = name
        self.views[name] = last

    def add(self, name: str, box: dict[str, Any], pos: ast.Pos) -> str:
        if name in self.boxes:  # a view took the name a clause's box would have
            raise fail(codes.CQL_DUPLICATE_VIEW, pos, codes.CQL_DUPLICATE_VIEW.render(name=name))
        self.boxes[name] = box
        self.out.positions[f"boxes.{name}"] = pos
        return name

    def source(self, source: ast.Source) -> str:
        if source.stream in self.views:
            return self.views[source.stream]
        if source.stream not in self.inputs:
            derived = source.stream in self.derived
            self.inputs[source.stream] = {"output": source.stream} if derived else {}
            self.out.positions[f"inputs.{source.stream}"] = source.pos
        return source.stream

    def query_level(self, selects: Sequence[ast.Select], at_level: ast.Level | None) -> None:
        """The level the diagram runs at, from a query's ``AT LEVEL`` and its (or a
        view's) windows' ``WHERE level DOMINATED BY``. A diagram runs at one level and
        filters every input to the tuples it dominates before any window, so the windows'
        level (one for all of them) is that level, and ``AT LEVEL`` must dominate it: running
        below the level asked for gives exactly the window's tuples (000 section 5's
        rewriting, done by the plan)."""
        windows = [
            s.window.level
            for sel in selects
            for s in sel.sources
            if s.window is not None and s.window.level is not None
        ]
        levels = [(self.resolve(w), w.pos) for w in windows]
        for other, pos in levels[1:]:
            if other != levels[0][0]:
                raise fail(
                    codes.CQL_LEVEL, pos, codes.CQL_LEVEL.render(reason="windows at two levels")
                )
        at = self.resolve(at_level) if at_level is not None else None
        if at is not None and levels and not dominated(levels[0][0], at):
            raise fail(
                codes.CQL_LEVEL,
                levels[0][1],
                codes.CQL_LEVEL.render(reason="the window's level is not dominated by AT LEVEL"),
            )
        if levels:
            level, pos = levels[0]
        elif at is not None and at_level is not None:
            level, pos = at, at_level.pos
        else:
            return
        if self.level is not None and self.level != level:
            raise fail(codes.CQL_LEVEL, pos, codes.CQL_LEVEL.render(reason="queries at two levels"))
        self.level = level
        self.out.positions["level"] = pos

    def resolve(self, level: ast.Level) -> dict[str, str]:
        """A level as the document writes it: per class its company, T or ⊥."""
        if level.classes is not None:
            if len(set(level.classes)) != len(level.classes):
                raise fail(
                    codes.CQL_LEVEL, level.pos, codes.CQL_LEVEL.render(reason="a class twice")
                )
            return dict(zip(level.classes, level.parts, strict=True))
        if self.classes is None:
            raise fail(
                codes.CQL_LEVEL,
                level.pos,
                codes.CQL_LEVEL.render(
                    reason="a level by position needs the conflict-of-interest classes; "
                    "name them, e.g. [banks: A, oil: T]"
                ),
            )
        if len(level.parts) != len(self.classes):
            raise fail(
                codes.CQL_LEVEL,
                level.pos,
                codes.CQL_LEVEL.render(
                    reason=f"{len(level.parts)} parts for {len(self.classes)} "
                    "conflict-of-interest classes"
                ),
            )
        return dict(zip(self.classes, level.parts, strict=True))

    def select(self, select: ast.Select, prefix: str) -> str:
        names = _Names(select.sources, self.schemas, _keys(select))
        where = [select.where] if select.where is not None else []
        if select.comma_join:
            last, where = self.comma_join(select, names, prefix)
        elif select.join_on is not None:
            last = self.join(select, names, prefix)
        else:
            last = self.source(select.sources[0])
        aggregating = bool(select.group_by) or select.having is not None
        aggregating = aggregating or any(i.aggregate for i in select.items or ())
        window = select.sources[0].window
        counted = aggregating and window is not None and window.kind in ("rows", "partition")
        if where and not counted:
            last = self.add(
                f"{prefix}where",
                {"type": "filter", "in": last, "where": _conjunction(names.text(e) for e in where)},
                where[0].pos,
            )
        if aggregating:
            if len(select.sources) > 1:
                raise fail(
                    codes.CQL_UNSUPPORTED,
                    select.pos,
                    codes.CQL_UNSUPPORTED.render(reason="aggregates over a join"),
                )
            last = self.aggregate(select, names, prefix, last, where if counted else [])
            if select.having is not None:
                last = self.add(
                    f"{prefix}having",
                    {"type": "filter", "in": last, "where": names.text(select.having)},
                    select.having.pos,
                )
        elif select.items is not None:
            fields: dict[str, str] = {}
            for item in select.items:
                _unique(fields, item)
                fields[_item_name(item)] = names.text(item.expr)
                self.out.positions[f"boxes.{prefix}select.fields.{_item_name(item)}"] = (
                    item.expr.pos
                )
            last = self.add(
                f"{prefix}select", {"type": "map", "in": last, "fields": fields}, select.pos
            )
        return last

    def join(self, select: ast.Select, names: _Names, prefix: str) -> str:
        left, right = select.sources
        assert select.join_on is not None
        sizes = set()
        for side in (left, right):
            w = side.window
            if w is None or w.kind != "range" or w.slide is not None:
                raise fail(
                    codes.CQL_WINDOW,
                    w.pos if w else side.pos,
                    codes.CQL_WINDOW.render(
                        reason="each side of a join needs [RANGE d] (its time bound), no slide"
                    ),
                )
            sizes.add(w.size)
        if len(sizes) > 1:
            raise fail(
                codes.CQL_WINDOW,
                right.window.pos if right.window else right.pos,
                codes.CQL_WINDOW.render(reason="both sides of a join need the same RANGE"),
            )
        on = []
        for part in _AND.split(select.join_on.text):
            match = _EQUAL.match(part)
            pair = {match.group(1), match.group(3)} if match else set()
            if not match or match.group(2) != match.group(4) or pair != {left.alias, right.alias}:
                raise fail(
                    codes.CQL_UNSUPPORTED,
                    select.join_on.pos,
                    codes.CQL_UNSUPPORTED.render(
                        reason="ON takes equalities of one field on both sides, joined by AND "
                        f"({left.alias}.k = {right.alias}.k AND ...)"
                    ),
                )
            on.append(match.group(2))
        box = {
            "type": "join",
            "left": self.source(left),
            "right": self.source(right),
            "on": on,
            "within": sizes.pop(),
        }
        return self.add(f"{prefix}join", box, select.pos)

    def comma_join(
        self, select: ast.Select, names: _Names, prefix: str
    ) -> tuple[str, list[ast.Expr]]:
        """``FROM a [ROWS n], b [ROWS m] WHERE ...``: a join box bounded by ``rows``. Each
        WHERE term on one side only filters that side before its window (unlike STREAM's
        CQL, whose window holds the side's last tuples of all: docs/cql.md); ``a.k = b.k``
        terms are the join's keys; the other terms (and those naming no side) filter the
        pairs, which the terms that remain are returned for."""
        if len(select.sources) != 2:
            raise fail(
                codes.CQL_UNSUPPORTED,
                select.sources[2].pos,
                codes.CQL_UNSUPPORTED.render(reason="a join of more than two streams"),
            )
        left, right = select.sources
        if left.alias == right.alias:
            raise fail(
                codes.CQL_UNSUPPORTED,
                right.pos,
                codes.CQL_UNSUPPORTED.render(
                    reason=f"both sides are called {left.alias!r}; name them apart "
                    f"(FROM {left.stream} a [ROWS n], {right.stream} b [ROWS m])"
                ),
            )
        for side in (left, right):
            w = side.window
            if w is None or w.kind != "rows" or w.slide is not None:
                raise fail(
                    codes.CQL_WINDOW,
                    w.pos if w else side.pos,
                    codes.CQL_WINDOW.render(
                        reason="each side of FROM a, b needs [ROWS n], no slide (a join of "
                        "[RANGE d] windows is written a JOIN b ON a.k = b.k)"
                    ),
                )
        sides: dict[str, list[ast.Expr]] = {left.alias: [], right.alias: []}
        on: list[str] = []
        rest: list[ast.Expr] = []
        for term in select.where_terms:
            aliases = {alias for _, _, alias, _ in term.refs}
            match = _EQUAL.match(term.text)
            if len(aliases) == 1 and aliases <= set(sides):
                sides[aliases.pop()].append(term)
            elif match and match.group(2) == match.group(4) and aliases == set(sides):
                on.append(match.group(2))
            else:
                rest.append(term)
        if not on:
            raise fail(
                codes.CQL_UNSUPPORTED,
                select.where.pos if select.where else select.pos,
                codes.CQL_UNSUPPORTED.render(
                    reason=f"a join needs WHERE {left.alias}.k = {right.alias}.k on a field "
                    "of both sides"
                ),
            )
        ends = []
        for side, name in ((left, "left"), (right, "right")):
            last = self.source(side)
            if sides[side.alias]:
                where = _conjunction(_unqualified(t) for t in sides[side.alias])
                filtered = {"type": "filter", "in": last, "where": where}
                last = self.add(f"{prefix}{name}_where", filtered, sides[side.alias][0].pos)
            ends.append(last)
        assert left.window is not None and right.window is not None
        box: dict[str, Any] = {
            "type": "join",
            "left": ends[0],
            "right": ends[1],
            "on": on,
            "rows": {"left": left.window.rows, "right": right.window.rows},
        }
        self.out.positions[f"boxes.{prefix}join.rows.left"] = left.window.pos
        self.out.positions[f"boxes.{prefix}join.rows.right"] = right.window.pos
        return self.add(f"{prefix}join", box, select.pos), rest

    def aggregate(
        self, select: ast.Select, names: _Names, prefix: str, last: str, where: list[ast.Expr]
    ) -> str:
        """The aggregate box; ``where``: a WHERE over a count window, which the box applies
        to the window's tuples (the window holds the last n tuples of the stream)."""
        source = select.sources[0]
        window = _window(source.window, select)
        aggregates: dict[str, str] = {}
        for item in select.items or ():
            if item.aggregate is None:
                if item.expr.text not in select.group_by or item.name not in (None, item.expr.text):
                    raise fail(
                        codes.CQL_SELECT,
                        item.expr.pos,
                        codes.CQL_SELECT.render(
                            reason=f"{item.expr.text!r} is neither an aggregate nor a GROUP BY "
                            "field (which keeps its name)"
                        ),
                    )
                continue
            name = _item_name(item)
            _unique(aggregates, item)
            aggregates[name] = names.text(item.expr) if item.argument else "count()"
            self.out.positions[f"boxes.{prefix}agg.aggregates.{name}"] = item.expr.pos
        if select.items is None or not aggregates:
            raise fail(
                codes.CQL_SELECT,
                select.pos,
                codes.CQL_SELECT.render(reason="select at least one aggregate (count(*), ...)"),
            )
        box: dict[str, Any] = {"type": "aggregate", "in": last, "window": window}
        if select.group_by:
            box["group_by"] = list(select.group_by)
        box["aggregates"] = aggregates
        if where:
            box["where"] = _conjunction(names.text(e) for e in where)
            self.out.positions[f"boxes.{prefix}agg.where"] = where[0].pos
        if source.window is not None:
            self.out.positions[f"boxes.{prefix}agg.window"] = source.window.pos
        return self.add(f"{prefix}agg", box, select.pos)


def _keys(select: ast.Select) -> frozenset[str]:
    """The fields a join's equalities name on both sides (``a.k = b.k``): the join box outputs
    each once under its own name."""
    if select.join_on is not None:
        parts = _AND.split(select.join_on.text)
    elif select.comma_join:
        parts = [t.text for t in select.where_terms]
    else:
        return frozenset()
    matches = [_EQUAL.match(p) for p in parts]
    return frozenset(
        m.group(2) for m in matches if m and m.group(2) == m.group(4) and m.group(1) != m.group(3)
    )


class _Names:
    """What the FROM aliases stand for: qualified names become the fields a box sees."""

    def __init__(
        self,
        sources: tuple[ast.Source, ...],
        schemas: Mapping[str, Schema],
        keys: frozenset[str] = frozenset(),
    ) -> None:
        self.keys = keys
        self.sources = {s.alias: s for s in sources}
        self.sides = {s.alias: side for s, side in zip(sources, ("left", "right"), strict=False)}
        self.joined = len(sources) == 2
        shared: set[str] = set()
        if self.joined:
            a, b = (schemas.get(s.stream) for s in sources)
            if a is not None and b is not None:
                shared = set(a.names) & set(b.names)
            elif sources[0].stream == sources[1].stream:
                shared = {"*"}  # a self-join shares every field
        self.shared = shared

    def field(self, alias: str, name: str, pos: ast.Pos) -> str:
        if alias not in self.sources:
            raise fail(codes.CQL_UNKNOWN_NAME, pos, codes.CQL_UNKNOWN_NAME.render(name=alias))
        if self.joined and name not in self.keys and (name in self.shared or "*" in self.shared):
            return f"{self.sides[alias]}_{name}"
        return name

    def text(self, expr: ast.Expr) -> str:
        out, last = [], 0
        for start, end, alias, name in expr.refs:
            pos = ast.Pos(expr.pos.line, expr.pos.column + start)
            out.append(expr.text[last:start] + self.field(alias, name, pos))
            last = end
        return "".join(out) + expr.text[last:]


def _conjunction(texts) -> str:
    """Terms joined by AND, each in parentheses when there are two or more."""
    parts = list(texts)
    return parts[0] if len(parts) == 1 else " AND ".join(f"({p})" for p in parts)


def _unqualified(expr: ast.Expr) -> str:
    """A term about one side of a join, in that side's own field names (``a.k`` is ``k``)."""
    out, last = [], 0
    for start, end, _alias, name in expr.refs:
        out.append(expr.text[last:start] + name)
        last = end
    return "".join(out) + expr.text[last:]


def _unique(taken: Mapping[str, str], item: ast.SelectItem) -> None:
    if _item_name(item) in taken:
        raise fail(
            codes.CQL_SELECT,
            item.expr.pos,
            codes.CQL_SELECT.render(reason=f"two outputs are named {_item_name(item)!r}"),
        )


def _item_name(item: ast.SelectItem) -> str:
    """AS name; else a plain field's own name; else ``fn_field`` / ``count`` for an aggregate."""
    if item.name:
        return item.name
    text = item.expr.text
    if _IDENT.match(text) or _QUALIFIED.match(text):
        return text.split(".")[-1]
    if item.aggregate:
        arg = item.argument.text if item.argument else ""
        return f"{item.aggregate}_{arg}" if _IDENT.match(arg) else item.aggregate
    raise fail(
        codes.CQL_SELECT,
        item.expr.pos,
        codes.CQL_SELECT.render(reason=f"name the expression {text!r} with AS"),
    )


def _window(window: ast.Window | None, select: ast.Select) -> dict[str, Any]:
    if window is None or window.kind in ("now", "unbounded"):
        raise fail(
            codes.CQL_WINDOW,
            window.pos if window else select.sources[0].pos,
            codes.CQL_WINDOW.render(
                reason="an aggregate needs [RANGE d], [ROWS n] or [PARTITION BY a ROWS n]"
            ),
        )
    if window.kind == "range":
        out: dict[str, Any] = {"size": window.size}
    elif window.kind == "rows" and select.group_by:
        out = {"rows": window.rows, "partitioned": False}
    elif window.kind == "partition" and set(window.partition) != set(select.group_by):
        raise fail(
            codes.CQL_WINDOW,
            window.pos,
            codes.CQL_WINDOW.render(reason="PARTITION BY and GROUP BY must name the same fields"),
        )
    else:
        out = {"rows": window.rows}
    if window.slide is not None:
        out["slide"] = window.slide
    return out


def on_result(statements: Sequence[ast.SecurityPunctuation], output: str) -> list[dict[str, Any]]:
    """``ON RESULT (INSERT SP ...)`` as an output's ``on_result`` (``boxes/output.py``): the
    sps' JSON form, without a stream (the policy is the output's own)."""
    from boxes.output import policy_json
    from boxes.punctuations.model import policy_from_cql

    try:
        sps = policy_from_cql(statements, 1, output)
    except InvalidInput as err:  # its message says where
        raise DiagramInvalid(
            [Problem(codes.SP_INVALID, statements[0].pos.path, err.message)]
        ) from None
    return [policy_json(sp) for sp in sps]
