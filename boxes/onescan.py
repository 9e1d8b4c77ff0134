"""A union of inputs of one source compiled as one scan, not as one branch per input.

Each input is its own read of the source's rows (``_stream = i``) with its own watermark and
label, so a union of N inputs is N branches: every micro-batch is planned over N branches and
its rows scanned N times (docs/benchmarks.md, "The live edge"). A union ``merged`` here reads
its inputs' rows at once (``_stream IN (...)``), with one watermark, and labels each row with
its own stream's bit, ``bits[_stream]`` (``boxes/scan.py``). Levels and security punctuations
are the rows' own columns (``_level``, the policy words the source computes per stream), so
they stay per row.

**The rule.** A union is read as one scan only if

* every input of it is a stream read by one source (``Scan``; not a derived input), the union
  is its only reader (its rows are counted once, as its own box), it keeps no arrival order
  (no count window), and all have one lateness; a box between an input and the union (a
  rewrite's filter, say) keeps that union as it is; and
* every output whose query runs the union runs only stateless boxes (inputs, filters, maps,
  unions): none depends on the watermark. Spark keeps a query's watermark as the least of its
  inputs', and a scan has one (the latest event time over all its streams, less the
  lateness), which would close a window, a join's buffer or an aggregate early when one stream
  lags; no stateless box reads the watermark, drops late rows or keeps state. So a query's
  results, labels and levels are the same; only its (unused) watermark is the scan's.

Box counts stay per input: the scan counts each input's rows by ``_stream``
(``observed.observed_scan``). A query's checkpoint is another matter: Spark gives each branch
its own source, and refuses a checkpoint logged with another number of sources; the server
reads a union as one scan only in a checkpoint that says so (``checkpoints.settle_one_scan``), and
a new version keeps an output's checkpoint only if its unions are read the same way
(``server/control/swap.py``, through ``unions``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from boxes import observed
from boxes.document import Plan
from boxes.filter import FilterBox
from boxes.input import InputBox
from boxes.map import MapBox
from boxes.scan import STREAM_COLUMN, Scan, sources
from boxes.union import UnionBox

STATELESS = (InputBox, FilterBox, MapBox, UnionBox)  # boxes no watermark or state concerns


@dataclass(frozen=True)
class Merged:
    """A union read as one scan: the scan and the union's inputs."""

    scan: Scan
    inputs: tuple[InputBox, ...]

    def compile(self, clearance: int | None, raw: bool, policy: Sequence[str], observe: bool):
        """The union's DataFrame: its inputs' rows, each labelled as its input labels it (see
        ``InputBox.attach``), counted per input if ``observe``."""
        bits = [0] * len(self.scan.inputs)
        for box in self.inputs:
            bits[self.scan.inputs.index(box.name)] = box.bit
        rows = self.scan.rows([b.name for b in self.inputs])
        frame = self.inputs[0].attach(rows, clearance, raw, policy, bits)
        if observe:
            indexes = {b.name: self.scan.inputs.index(b.name) for b in self.inputs}
            frame = observed.observed_scan(frame, indexes)
        return frame.drop(STREAM_COLUMN)


def merged(plan: Plan, scans: Sequence[Scan]) -> dict[str, Merged]:
    """Per union of ``plan`` read as one scan (the rule above), how it is read."""
    of_scan = {name: scan for scan in scans for name in scan.inputs}
    chosen = _unions(plan, [scan.inputs for scan in scans])
    return {union: Merged(of_scan[inputs[0].name], inputs) for union, inputs in chosen.items()}


def unions(plan: Plan) -> frozenset[str]:
    """The unions ``plan``'s micro-batch queries read as one scan (what its sources read:
    ``scan.sources``), for whoever must know without compiling (``server/control/swap.py``)."""
    return frozenset(_unions(plan, sources(plan)))


def real_time_sources(plan: Plan, joined: bool = True) -> list[list[str]]:
    """``plan``'s streams as its real-time queries' sources read them. Spark's real-time mode
    refuses a union of one source with itself (``IDENTICAL_SOURCES_IN_UNION_NOT_SUPPORTED``),
    and each source holds a task slot for the query's life (``server/runtime/modes.py``): so
    the inputs of each union read as one scan (the rule above, as micro-batches read it) are
    one source of their own, one slot, and every other stream is its own source. Not
    ``joined`` (a checkpoint written before unions were: ``checkpoints.settle_union_source``),
    every stream is its own source."""
    if not joined:
        return [[name] for name in plan.streams()]
    together = [[b.name for b in inputs] for inputs in _unions(plan, sources(plan)).values()]
    grouped = {name for group in together for name in group}
    return together + [[name] for name in plan.streams() if name not in grouped]


def _unions(plan: Plan, groups: Sequence[Sequence[str]]) -> dict[str, tuple[InputBox, ...]]:
    """Per union of ``plan`` read as one scan, its inputs, when each of ``groups`` is read by
    one source."""
    boxes = {b.name: b for b in plan.boxes}
    readers = Counter(u for b in plan.boxes for u in b.upstream)
    group_of = {name: k for k, group in enumerate(groups) for name in group}
    lineages = observed.lineages(plan).values()
    found = {}
    for union in plan.boxes:
        if not isinstance(union, UnionBox):
            continue
        inputs = tuple(
            b
            for s in union.sources
            if isinstance(b := boxes[s], InputBox) and _alone(b, readers, group_of)
        )
        if len(inputs) < len(union.sources):
            continue
        one_scan = len({group_of[b.name] for b in inputs}) == 1
        one_lateness = len({b.lateness for b in inputs}) == 1
        stateless = all(
            all(isinstance(boxes[n], STATELESS) for n in names)
            for names in lineages
            if union.name in names
        )
        if one_scan and one_lateness and stateless:
            found[union.name] = inputs
    return found


def _alone(box: InputBox, readers: Counter, group_of: Mapping[str, int]) -> bool:
    """Whether ``box`` is a stream of a scan, read by one box, in no arrival order."""
    return (
        box.output is None and not box.arrival and readers[box.name] == 1 and box.name in group_of
    )
