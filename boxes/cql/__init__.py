"""Sluice's CQL dialect: another way to write a diagram document (docs/cql.md).

One job per module: ``grammar.lark`` (the syntax, with the expression language's own rules),
``parser.py`` (text -> ``ast.py`` tree), ``compiler.py`` (tree -> document), ``printer.py``
(document -> text). The document stays the one thing validated, stored and deployed:
``validate_cql`` compiles, then validates the document as any other, and reports a problem of
the document at the CQL line and column it came from.

>>> doc = compile_cql("SELECT symbol, avg(price) AS p FROM s [RANGE 10s] GROUP BY symbol")
>>> doc["boxes"]["out_agg"]["window"], doc["outputs"]
({'size': '10s'}, {'out': {'from': 'out_agg'}})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from boxes.cql.compiler import Compiled, compile_script
from boxes.cql.parser import parse
from boxes.cql.printer import to_cql
from boxes.document import Plan, validate
from boxes.errors import DiagramInvalid, Problem
from boxes.types import Schema

__all__ = ["compile_cql", "to_cql", "validate_cql", "parse"]


def compile_cql(
    text: str,
    schemas: Mapping[str, Schema] | None = None,
    name: str | None = None,
    classes: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The diagram document of a CQL script (not yet validated); ``classes``: the
    conflict-of-interest classes a level written by position refers to, in order."""
    return compile_script(parse(text), schemas, name, classes).document


def validate_cql(
    text: str,
    streams: Mapping[str, Schema] | None = None,
    name: str | None = None,
    classes: Sequence[str] | None = None,
) -> tuple[dict[str, Any], Plan]:
    """Compile and validate; every problem located in the CQL text (``cql.LINE.COLUMN``)."""
    compiled = compile_script(parse(text), streams, name, classes)
    try:
        return compiled.document, validate(compiled.document, streams)
    except DiagramInvalid as err:
        raise relocate(err, compiled) from None


def relocate(err: DiagramInvalid, compiled: Compiled) -> DiagramInvalid:
    """The document's problems at the CQL position of the part they are about (the path
    says where, once; the message says what)."""
    problems = []
    for p in err.problems:
        pos = compiled.position_of(p.path)
        problems.append(Problem(p.code, pos.path if pos else p.path, p.message))
    return DiagramInvalid(problems)
