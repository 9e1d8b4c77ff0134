"""Overlapping plans (seed 000, section 5): a prefix run once, each member's filters on top.

Two diagrams that read the same inputs through the same boxes, and differ only in the filters
just before their one output (and a map after them: the paper's Q1 and Q2 select then
project), overlap: those filters are select nodes over one input queue (Definition 7). What
comes before them may hold state: two users' equal windows with different thresholds on their
results share the windows.
``split`` cuts such a plan into its *prefix* (the plan without the filters and map) and its
*residual* (the filters' conjuncts and the map's fields). A plan with neither splits too,
with an empty residual: it is the prefix.

A *prefix host* runs the prefix as one query (``runner.py``), shared by every plan with that
prefix as any shared plan is (``sharing.key``). Its ``foreachBatch`` is a ``Dispatcher``,
which decomposes the residuals it serves as Definition 8 does: the conjuncts every residual
has are one filter of their own, evaluated once; each residual's other conjuncts become a
boolean column, and its map's fields columns of their own; one Spark action brings the batch
back, and each residual's rows go to a result log of its own (an ``OutputSink``). Members
with the same residual read that one log from their bases, as members of a whole shared plan
read its host's (``sharing.py``).

Why this shape: each residual log is written inside the batch, before Spark commits it, so a
crash replays the batch and a log that has it skips it (exactly once, with no log of the
prefix's rows); a member's rows are exactly its plan's, since its filters are the same
expressions on the same rows (NULL counts as false, as in ``FilterBox``); labels pass
unchanged, as a filter copies its input's label.

A prefix with state is joined as a whole plan with state is (``sharing.py``): only while its
host has read nothing, since its windows would hold tuples from before the member came.

Not split (such plans share whole, or run alone): plans with several outputs, a filter or map
reading ``_level`` (the output has no such field), and governed plans, whose labels depend on
the fields their filters and maps read (``boxes/punctuations/fields.py``).

Equal stateless boxes feeding *different* windows are not shared: a window's state spans
batches, so it cannot run in another query's ``foreachBatch``, and running the common part as
a query of its own that the windows read (a derived stream) changes their results: Spark's
watermark would come from the rows the common filters keep, not from every row the inputs
read, nor as the least of several inputs' (``docs/architecture.md``; ``bench.stateful_prefix``
measures what it would cost).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import operator
import threading
from collections import Counter
from collections.abc import Iterable, Sequence

from boxes.document import Plan
from boxes.expressions import CheckedExpr, check_expression, check_predicate
from boxes.expressions import nodes as n
from boxes.expressions.columns import to_column
from boxes.filter import FilterBox
from boxes.map import MapBox
from boxes.output import OutputBox
from boxes.types import Schema
from server.runtime import sharing
from server.runtime.handover import to_arrow
from server.runtime.outputs import OutputSink, run_replayed

PREFIX = "p"  # a prefix host's key: PREFIX + the prefix's key (never a whole plan's key)
MARK = "__residual_"  # the boolean columns a batch carries while it is split (no field's name)


@dataclasses.dataclass(frozen=True)
class Residual:
    """What a member applies to its prefix's output: its filters' conditions as written and,
    if a map ends its plan, that map's fields (what is stored); parsed, each filter's condition
    in data-flow order (its conjuncts, ``AND``s apart, are what is evaluated; each filter's
    rows are counted) and the fields' expressions."""

    texts: tuple[str, ...]
    filters: tuple[n.Node, ...]
    fields: tuple[tuple[str, str], ...] = ()
    projection: tuple[tuple[str, CheckedExpr], ...] = ()
    # The member's own names for its filters and then its map: what its counts are shown as.
    boxes: tuple[str, ...] = dataclasses.field(default=(), compare=False)

    @functools.cached_property
    def conjuncts(self) -> tuple[n.Node, ...]:
        return tuple(_conjuncts(self.filters))

    @property
    def name(self) -> str:
        """Equal conditions and fields, one log: its name among its host's logs."""
        described = json.dumps(self.stored())
        return "r" + hashlib.sha256(described.encode()).hexdigest()[:12]

    def stored(self) -> dict:
        return {"where": list(self.texts), "fields": [list(f) for f in self.fields]}

    @classmethod
    def of(cls, filters: Sequence[FilterBox], last: MapBox | None = None) -> Residual:
        projection = last.exprs if last is not None else ()
        return cls(
            tuple(f.where.text for f in filters),
            tuple(f.where.node for f in filters),
            tuple((field, e.text) for field, e in projection),
            projection,
            tuple(b.name for b in [*filters, *([last] if last is not None else [])]),
        )

    @classmethod
    def load(cls, stored: dict, schema: Schema) -> Residual:
        """A stored residual, checked again against the prefix's output."""
        texts = stored["where"]
        checked = [check_predicate(t, schema, f"residual.{i}") for i, t in enumerate(texts)]
        fields = [(f, check_expression(t, schema, f"residual.{f}")) for f, t in stored["fields"]]
        return cls(
            tuple(texts),
            tuple(c.node for c in checked),
            tuple((f, e.text) for f, e in fields),
            tuple(fields),
        )


def _conjuncts(nodes: Iterable[n.Node]) -> list[n.Node]:
    """Each condition's ``AND``-ed parts, in order, each once."""
    found: list[n.Node] = []
    stack = list(reversed(list(nodes)))
    while stack:
        node = stack.pop()
        if isinstance(node, n.Logic) and node.op == "AND":
            stack += [node.right, node.left]
        elif node not in found:
            found.append(node)
    return found


def split(plan: Plan) -> tuple[Plan, Residual] | None:
    """The plan's prefix and residual, or None if it does not split (module docstring)."""
    outputs = [b for b in plan.boxes if isinstance(b, OutputBox)]
    if plan.governed or len(outputs) != 1:
        return None
    (output,) = outputs
    boxes = {b.name: b for b in plan.boxes}
    readers = Counter(up for b in plan.boxes for up in b.upstream)
    source = output.source
    end = boxes[source]
    last = end if isinstance(end, MapBox) and readers[source] == 1 else None
    if last is not None:
        source = last.source
    filters: list[FilterBox] = []
    while isinstance(box := boxes[source], FilterBox) and readers[source] == 1:
        filters.append(box)
        source = box.source
    schema = boxes[source].schema  # the prefix's output
    read = {r for f in filters for r in f.where.fields}
    read |= {r for _, e in (last.exprs if last is not None else ()) for r in e.fields}
    if read - set(schema.names):
        return None
    cut = {f.name for f in filters} | ({last.name} if last is not None else set())
    kept = tuple(
        dataclasses.replace(b, source=source, schema=schema) if b is output else b
        for b in plan.boxes
        if b.name not in cut
    )
    prefix = dataclasses.replace(plan, boxes=kept, outputs={output.name: schema})
    return prefix, Residual.of(filters[::-1], last)


def placement(plan: Plan) -> tuple[str, Plan, Residual | None]:
    """Where a new member of a shared execution goes: its host's key, the plan its host runs
    and its residual (None if the host runs its whole plan)."""
    cut = split(plan)
    if cut is None:
        return sharing.key(plan), plan, None
    prefix, residual = cut
    return PREFIX + sharing.key(prefix), prefix, residual


def _all(conjuncts: Iterable[n.Node]):
    """True where every conjunct is (NULL as false); True for none."""
    from pyspark.sql import functions as F

    columns = [F.coalesce(to_column(c), F.lit(False)) for c in conjuncts]
    return functools.reduce(operator.and_, columns) if columns else F.lit(True)


class Dispatcher:
    """A prefix host's ``foreachBatch``: each residual's rows of the batch to its own log."""

    def __init__(self, tasks: int, fields: Sequence[str], counted: bool = False) -> None:
        """``fields``: the prefix output's own fields (a map replaces them; every other column,
        the label and what the output split off it, ``_level``, ``_raw``, passes to each
        residual's rows as an unsplit plan's output has it); ``counted``: count each residual's
        rows in and out of each of its filters (a runtime with ``box_metrics``), which the
        editor shows as the member's boxes' rows."""
        self.tasks = tasks
        self.fields = frozenset(fields)
        self.counted = counted
        self._lock = threading.Lock()
        self._splitting = threading.Lock()  # held while a batch is split (see ``drop``)
        self._residuals: dict[str, tuple[Residual, OutputSink]] = {}
        self._counts: dict[str, Counts] = {}

    def add(self, residual: Residual, sink: OutputSink) -> None:
        with self._lock:
            self._residuals[residual.name] = (residual, sink)
            if self.counted:
                self._counts.setdefault(residual.name, Counts.zero(len(residual.filters)))

    def counts(self, name: str) -> Counts | None:
        """Residual ``name``'s rows since it was added (None if it is not split for, or this
        dispatcher does not count)."""
        with self._lock:
            return self._counts.get(name)

    def drop(self, name: str) -> OutputSink | None:
        """Split for residual ``name`` no more; its sink, once no batch is being split (so
        it may be closed)."""
        with self._splitting, self._lock:
            gone = self._residuals.pop(name, None)
            self._counts.pop(name, None)
        return gone[1] if gone else None

    def common(self) -> int:
        """How many conjuncts every residual has (Definition 8's shared node)."""
        with self._lock:
            residuals = [r for r, _ in self._residuals.values()]
        return len(_shared(residuals))

    def handle(self, frame, batch_id: int) -> None:
        """Split one micro-batch among the residuals that have not logged it (after a crash,
        some may have): one action for all of them."""
        with self._splitting:
            self._split(frame, batch_id)

    def _split(self, frame, batch_id: int) -> None:
        with self._lock:
            due = [(r, s) for r, s in self._residuals.values() if batch_id > s.last_batch_id]
        if not due:  # a replay every log has: keep the prefix's state, deliver nothing
            run_replayed(frame)
            return
        common = _shared(r for r, _ in due)
        marks = {
            f"{MARK}{i}": _all(c for c in r.conjuncts if c not in common)
            for i, (r, _) in enumerate(due)
        }
        fields = {
            f"{MARK}{i}_{k}": e.to_column()
            for i, (r, _) in enumerate(due)
            for k, (_, e) in enumerate(r.projection)
        }
        observation = None
        if self.counted:
            observation, frame = _observed(frame, [r for r, _ in due])
        kept = frame.where(_all(common)).withColumns(marks)
        if all(len(r.conjuncts) > len(common) for r, _ in due):  # else every row is wanted
            kept = kept.where(functools.reduce(operator.or_, (kept[m] for m in marks)))
        table = to_arrow(kept.withColumns(fields), self.tasks)  # the one action
        if observation is not None:
            self._count([r for r, _ in due], observation.get)
        own = [c for c in table.column_names if not c.startswith(MARK)]
        carried = [c for c in own if c not in self.fields]  # the label and its companions
        for i, ((residual, sink), mark) in enumerate(zip(due, marks, strict=True)):
            rows = table.filter(table[mark])
            if residual.projection:  # its map's fields, as the map would name them
                names = [f for f, _ in residual.projection]
                made = [f"{MARK}{i}_{k}" for k in range(len(names))]
                rows = rows.select([*made, *carried]).rename_columns([*names, *carried])
            else:
                rows = rows.select(own)
            sink.take(rows, batch_id)

    def _count(self, residuals: Sequence[Residual], observed: dict) -> None:
        with self._lock:
            for i, residual in enumerate(residuals):
                batch = [int(observed[_ROWS_IN])]
                batch += [int(observed[_rows_out(i, k)]) for k in range(len(residual.filters))]
                if residual.name in self._counts:  # not dropped meanwhile
                    self._counts[residual.name] = self._counts[residual.name].plus(batch)


_ROWS_IN = "rows_in"  # an observation's count of the prefix's rows (``_observed``)


def _rows_out(residual: int, k: int) -> str:
    """The name an observation counts the rows out of filter ``k`` of the batch's residual
    ``residual`` (its index among those the batch is split for) under."""
    return f"rows_out_{residual}_{k}"


@dataclasses.dataclass(frozen=True)
class Counts:
    """A residual's rows: into it, then out of each of its filters in data-flow order; all
    since it was added (``rows``) and in its newest batch (``batch``)."""

    rows: tuple[int, ...]
    batch: tuple[int, ...]

    @classmethod
    def zero(cls, filters: int) -> Counts:
        return cls((0,) * (filters + 1), (0,) * (filters + 1))

    def plus(self, batch: Sequence[int]) -> Counts:
        return Counts(tuple(a + b for a, b in zip(self.rows, batch, strict=True)), tuple(batch))

    def rows_into(self) -> dict[str, int]:
        """The rows out of the prefix's box the residual reads, as this residual saw them."""
        return {"rows_out": self.rows[0], "batch_rows_out": self.batch[0]}

    def per_box(self, residual: Residual, output: str) -> dict[str, dict[str, int]]:
        """Rows in and out of the member's filters, map and ``output``, in its names (as
        ``boxes/observed.per_box`` gives them): each filter's rows out are the next one's in;
        a map and the output pass on what the last filter kept."""
        last = len(residual.filters)
        filters = residual.boxes[:last]
        after = [*residual.boxes[last:], output]  # its map, if it has one, and its output
        spans = [(name, k, k + 1) for k, name in enumerate(filters)]
        spans += [(name, last, last) for name in after]
        return {
            name: {
                "rows_in": self.rows[i],
                "rows_out": self.rows[o],
                "batch_rows_in": self.batch[i],
                "batch_rows_out": self.batch[o],
            }
            for name, i, o in spans
        }


def _observed(frame, residuals: Sequence[Residual]):
    """``frame`` counting its rows and, per residual, the rows each of its filters keeps
    (with the ones before it), as Spark observes them during the batch's one action."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    observation = Observation()
    counts = [F.count(F.lit(1)).alias(_ROWS_IN)]
    for i, residual in enumerate(residuals):
        for k in range(len(residual.filters)):
            kept = _all(residual.filters[: k + 1])
            counts.append(F.count_if(kept).alias(_rows_out(i, k)))
    return observation, frame.observe(observation, *counts)


def _shared(residuals: Iterable[Residual]) -> list[n.Node]:
    """The conjuncts in every one of ``residuals``, in the first one's order."""
    residuals = list(residuals)
    if not residuals:
        return []
    return [c for c in residuals[0].conjuncts if all(c in r.conjuncts for r in residuals[1:])]


def is_prefix_host(diagram_id: str) -> bool:
    return diagram_id.startswith(sharing.HOST + PREFIX)


def log_name(output: str, residual: str) -> str:
    """The name of the log of residual ``residual``'s rows of a prefix host's ``output``."""
    return f"{output}.{residual}"


def fed_by(log: str) -> str:
    """The output whose query feeds a residual's log (named by ``log_name``)."""
    return log.rpartition(".")[0]
