"""The typed tree of a CQL script: what the parser makes and the compiler reads.

Every node keeps where it starts (``Pos``), so a problem found while compiling, or while
validating the diagram compiled from it, points at the text that caused it. Expressions stay
text (``Expr``): they are the expression language's, checked by its allow-list when the
diagram is validated, never interpreted here.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Pos:
    line: int
    column: int

    @property
    def path(self) -> str:
        """The dotted path of a CQL position in a Problem: ``cql.LINE.COLUMN``."""
        return f"cql.{self.line}.{self.column}"


@dataclass(frozen=True)
class Expr:
    """An expression's text (qualified names already resolved) and where it starts."""

    text: str
    pos: Pos = field(compare=False)
    # (start, end, alias, field) of each qualified name in ``text``, for the compiler.
    refs: tuple[tuple[int, int, str, str], ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Level:
    """A security level of SIF-CQL / CW-DSMS: one part per conflict-of-interest class, a
    company, ``T`` or ``⊥``. The papers write it by position (``[1, B]``: the classes in the
    catalog's order); ``classes`` names them instead (``[banks: A, oil: T]``)."""

    parts: tuple[str, ...]
    pos: Pos = field(compare=False)
    classes: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Window:
    """``[RANGE size SLIDE slide]``, ``[ROWS n SLIDE m]``, ``[PARTITION BY a ROWS n]``,
    ``[NOW]`` or ``[RANGE UNBOUNDED]``; ``level`` is SIF-CQL's ``WHERE level DOMINATED BY``."""

    kind: str  # range | rows | partition | now | unbounded
    pos: Pos = field(compare=False)
    size: str | None = None  # a duration, as the document writes it ('10s')
    slide: str | int | None = None
    rows: int | None = None
    partition: tuple[str, ...] = ()
    level: Level | None = None


@dataclass(frozen=True)
class Source:
    """A stream in FROM, its window and the name expressions call it by."""

    stream: str
    alias: str
    window: Window | None
    pos: Pos = field(compare=False)


@dataclass(frozen=True)
class SelectItem:
    """``expr [AS name]``; ``aggregate`` is set when the item is exactly one aggregate call."""

    expr: Expr
    name: str | None
    aggregate: str | None = None  # count, sum, avg, min, max
    argument: Expr | None = None


@dataclass(frozen=True)
class Select:
    items: tuple[SelectItem, ...] | None  # None: SELECT *
    sources: tuple[Source, ...]
    join_on: Expr | None
    where: Expr | None
    group_by: tuple[str, ...]
    having: Expr | None
    pos: Pos = field(compare=False)
    comma_join: bool = False
    # WHERE's top-level AND terms, for a join of ``FROM a, b`` to place each where it belongs.
    where_terms: tuple[Expr, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class SecurityPunctuation:
    """003's ``INSERT SP [AS name] INTO STREAM s LET ...``: parsed here, carried out by the
    security-punctuation issue."""

    name: str | None
    stream: str | None
    tuples: tuple[int, int] | None  # DDP TUPLES:[a, b]; None with ``all_tuples``
    all_tuples: bool
    attributes: tuple[str, ...] | None  # DDP ATTRIBUTES:...; None: all
    model: str | None  # SRP model:role
    role: str | None
    grant: bool
    sign: str | None  # POSITIVE | NEGATIVE
    immutable: bool | None
    pos: Pos = field(compare=False)


@dataclass(frozen=True)
class Query:
    """``[INSERT INTO output] [I|R|D]STREAM(select UNION ...) [ON RESULT (...)] [AT LEVEL l]``."""

    output: str | None
    stream: str  # istream | rstream | dstream (a bare query is an ISTREAM)
    selects: tuple[Select, ...]
    on_result: tuple[SecurityPunctuation, ...]
    level: Level | None
    pos: Pos = field(compare=False)
    semantic: str | None = None  # SEMANTIC WEAK | STRONG: the output's (docs/labels.md)


@dataclass(frozen=True)
class View:
    """``CREATE VIEW name AS select UNION ...``: a named intermediate stream, which later
    queries and views read by its name in FROM (a box of the diagram, not an output)."""

    name: str
    selects: tuple[Select, ...]
    pos: Pos = field(compare=False)


@dataclass(frozen=True)
class Column:
    name: str
    type: str


@dataclass(frozen=True)
class CreateStream:
    name: str
    columns: tuple[Column, ...]
    event_time: str | None
    lateness: str | None
    pos: Pos = field(compare=False)


@dataclass(frozen=True)
class Script:
    """A whole CQL text: an optional diagram name, stream declarations, queries, punctuations,
    and views (in the order written: a view reads only streams and views before it)."""

    name: str | None
    streams: tuple[CreateStream, ...]
    queries: tuple[Query, ...]
    punctuations: tuple[SecurityPunctuation, ...]
    views: tuple[View, ...] = ()
