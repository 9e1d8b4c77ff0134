"""Rows through each box of a running diagram, as Spark's observed metrics report them.

Spark's SQL metrics belong to physical operators, which the optimizer merges, splits and
reorders (a map and a filter become one generated stage, a union has no counter at all), so
they cannot be mapped back to boxes. Instead the compiler names each box's output with
``DataFrame.observe``: a count per box per micro-batch, reported in the query's progress
(``observedMetrics``) under the box's name. Rows into a box are its upstream boxes' rows out.
An observed count is not free (it ends Spark's generated code at the box: bench/observe_probe.py),
so only boxes that change the number of rows are observed (inputs, filters, aggregates, joins);
a map's rows out are its input's, a union's the sum of its inputs', an output's its box's.

A box upstream of two outputs runs in both outputs' queries; its counts are read from the
first of those outputs (plan order). A count is of every tuple through the box, before any
SecFilter: who may see it is the server's decision (``docs/editor.md``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from boxes.base import Box
from boxes.document import Plan
from boxes.input import InputBox
from boxes.map import MapBox
from boxes.output import OutputBox
from boxes.scan import STREAM_COLUMN
from boxes.union import UnionBox

PREFIX = "box:"  # an observed metric's name: the prefix and the box's name
SCAN = "scan:"  # a union's inputs read as one scan (boxes/onescan.py): a count per input
ROWS = "rows"


def counted(box: Box) -> bool:
    """Whether a box's rows are observed (see above): it may change how many rows there are."""
    return not isinstance(box, (MapBox, UnionBox, OutputBox))


def observed(frame: Any, box: Box) -> Any:
    """``frame`` (the box's DataFrame) counting its rows per micro-batch under the box's name,
    if the box is ``counted``."""
    if not counted(box):
        return frame
    from pyspark.sql import functions as F

    return frame.observe(PREFIX + box.name, F.count(F.lit(1)).alias(ROWS))


def observed_scan(frame: Any, indexes: Mapping[str, int]) -> Any:
    """``frame`` (inputs read as one scan, with ``_stream``) counting each input's rows per
    micro-batch: the input ``name``'s are those whose ``_stream`` is ``indexes[name]``. One
    metric for all of them, named by the first input, so that a scan costs one count."""
    from pyspark.sql import functions as F

    per_input = [
        F.count(F.when(F.col(STREAM_COLUMN) == index, 1)).alias(name)
        for name, index in indexes.items()
    ]
    return frame.observe(SCAN + next(iter(indexes)), *per_input)


def counts(metrics: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
    """Rows out per box from one progress's ``observedMetrics`` (other metrics ignored).

    >>> counts({"box:f": {"rows": 3}, "scan:a": {"a": 1, "b": 0}, "other": {"n": 1}})
    {'f': 3, 'a': 1, 'b': 0}
    """
    found: dict[str, int] = {}
    for name, row in metrics.items():
        if name.startswith(PREFIX):
            found[name[len(PREFIX) :]] = int(row.get(ROWS) or 0)
        elif name.startswith(SCAN):
            found.update({box: int(rows or 0) for box, rows in row.items()})
    return found


def lineages(plan: Plan) -> dict[str, frozenset[str]]:
    """Per output, the boxes (inputs and operators) its query runs."""
    upstream = {b.name: b.upstream for b in plan.boxes}
    out = {}
    for output in plan.outputs:
        seen: set[str] = set()
        todo = list(upstream[output])
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo.extend(upstream[name])
        out[output] = frozenset(seen)
    return out


def reader(plan: Plan) -> dict[str, str]:
    """Per observed box, the output whose query's counts stand for it (the first in plan
    order that runs it)."""
    kept = {b.name for b in plan.boxes if counted(b)}
    chosen: dict[str, str] = {}
    for output, boxes in lineages(plan).items():
        for name in sorted(boxes & kept):
            chosen.setdefault(name, output)
    return chosen


def per_box(plan: Plan, observed_out: Mapping[str, int]) -> dict[str, dict[str, int | None]]:
    """Rows in and out of every box (outputs included) from rows out of the observed boxes;
    an input's rows in are unknown to it (``None``): it reads the stream's log."""
    rows_out: dict[str, int] = {}
    out: dict[str, dict[str, int | None]] = {}
    for box in plan.boxes:  # in data-flow order: every upstream box is done first
        rows_in = None if isinstance(box, InputBox) else _sum(rows_out, box.upstream)
        if counted(box):
            rows_out[box.name] = observed_out.get(box.name, 0)
        else:
            rows_out[box.name] = rows_in or 0
        out[box.name] = {"rows_in": rows_in, "rows_out": rows_out[box.name]}
    return out


def _sum(rows_out: Mapping[str, int], names: Iterable[str]) -> int:
    return sum(rows_out[n] for n in names)


def sources(plan: Plan) -> dict[str, frozenset[str]]:
    """Per box, the source streams its tuples may derive from: what its counts are about."""
    found: dict[str, frozenset[str]] = {}
    for box in plan.boxes:
        if isinstance(box, InputBox) and box.output is not None:
            found[box.name] = frozenset(plan.label_sources[b] for b in box.remap)
        elif isinstance(box, InputBox):
            found[box.name] = frozenset({plan.label_sources[box.bit]})
        else:
            found[box.name] = frozenset().union(*(found[u] for u in box.upstream))
    return found
