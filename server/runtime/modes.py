"""Which outputs of a deployed diagram run in Spark's real-time mode, and why (issue 41).

An output runs in real-time mode only if its diagram asks (``realtime: true``), every box
its query runs is a filter, map or union (over streams or derived inputs alike: each result
row is one input row, so a row's place in an epoch names it, ``realtime.py``), and the
server has task slots free for it: a real-time query holds one slot per source partition
(one per source: the streams of a union read as one scan, another stream, or a derived
input: ``onescan.real_time_sources``) for its whole life. The budget is
``RuntimeSettings.realtime_slots``: by default (``None``) Spark's cores less one, which the
micro-batches keep; 0 turns the mode off (docs/architecture.md, "Real-time mode"). Everything
else runs in micro-batches, and status says why. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

from boxes import observed
from boxes.aggregate import AggregateBox
from boxes.base import Box
from boxes.document import Plan
from boxes.filter import FilterBox
from boxes.input import InputBox
from boxes.join import JoinBox
from boxes.map import MapBox
from boxes.onescan import real_time_sources
from boxes.union import UnionBox

REAL_TIME = "real-time"
MICRO_BATCH = "micro-batch"
ROW_FOR_ROW = (InputBox, FilterBox, MapBox, UnionBox)  # each result row is one input row
NOT_ASKED = "not asked"
NOT_ENABLED = "real-time mode is not enabled on this server"
KEPT = "as this version first ran"  # its checkpoint is of that mode


@dataclass(frozen=True)
class Mode:
    """How one output runs, why, and the task slots it holds while it runs."""

    mode: str
    reason: str
    slots: int = 0

    def stored(self) -> dict:
        return asdict(self)

    def shown(self) -> dict[str, str]:
        """What status shows of it (``outputs.NAME``)."""
        return {"mode": self.mode, "mode_reason": self.reason}


def held_back_by(box: Box) -> str | None:
    """Why a box keeps its output in micro-batches; None if real-time mode runs it."""
    if isinstance(box, ROW_FOR_ROW):
        return None
    if isinstance(box, JoinBox):
        return "a stream-stream join"
    if isinstance(box, AggregateBox):
        return (
            "a count window" if box.rows is not None else "an aggregate (windows are emitted once)"
        )
    return f"a {box.type_name} box"


def sources_of(plan: Plan, boxes: Iterable[str], streams: Sequence[Sequence[str]]) -> int:
    """The sources a query running ``boxes`` opens when ``streams`` are read by a source
    each (``scan.sources`` in micro-batches, ``onescan.real_time_sources`` in real-time
    mode): one per group with a stream among them, and one per derived input among them."""
    names = set(boxes)
    return sum(1 for group in streams if names & set(group)) + len(names & plan.derived().keys())


def read_twice(plan: Plan, output: str) -> str | None:
    """An input that reaches ``output`` along two paths (a union of it with itself): real-time
    mode runs no union of a source with itself."""
    inputs = [b.name for b in plan.boxes if isinstance(b, InputBox)]
    for name in inputs:
        reach = {name: 1}
        for box in plan.boxes:
            if box.upstream:
                reach[box.name] = sum(reach.get(u, 0) for u in box.upstream)
        if reach.get(output, 0) > 1:
            return name
    return None


def decide(
    plan: Plan, budget: int, in_use: int, kept: Mapping[str, Mode] | None = None
) -> dict[str, Mode]:
    """Each output's mode, in plan order: ``budget`` slots on this server, ``in_use`` of them
    held by other diagrams' real-time queries (and by this plan's earlier outputs). An output
    in ``kept`` ran before in this version: its checkpoint is of that mode, so it keeps it."""
    kept = kept or {}
    by_name = {b.name: b for b in plan.boxes}
    modes = {o: m if m.slots else Mode(m.mode, f"{KEPT}: {m.reason}") for o, m in kept.items()}
    in_use += sum(m.slots for m in kept.values())
    read = real_time_sources(plan)
    for output, boxes in observed.lineages(plan).items():
        if output in kept:
            continue
        held = next((r for b in sorted(boxes) if (r := held_back_by(by_name[b])) is not None), None)
        needs = sources_of(plan, boxes, read)
        twice = read_twice(plan, output)
        if not plan.realtime:
            modes[output] = Mode(MICRO_BATCH, NOT_ASKED)
        elif held is not None:
            modes[output] = Mode(MICRO_BATCH, held)
        elif twice is not None:
            modes[output] = Mode(MICRO_BATCH, f"a union that reads {twice} twice")
        elif budget <= 0:
            modes[output] = Mode(MICRO_BATCH, NOT_ENABLED)
        elif in_use + needs > budget:
            reason = f"no real-time slot free ({in_use} of {budget} in use, {needs} needed)"
            modes[output] = Mode(MICRO_BATCH, reason)
        else:
            in_use += needs
            modes[output] = Mode(REAL_TIME, f"{needs} of {budget} real-time slots", needs)
    return modes


def default_budget(cores: int) -> int:
    """The slots real-time queries may hold when no setting says: all cores but one, which the
    micro-batches (and every other diagram) keep."""
    return max(0, cores - 1)
