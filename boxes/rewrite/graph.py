"""What the rewriter needs to know about a plan: who reads whom, which source attributes the
query uses, which sources feed a box, and where each field of a box comes from.

The paper's initialisation pass (section 6.4) does the same: it "identifies the source
attribute of each attribute used by an operator" so policies on source attributes can be
applied to operators that do not touch the sources directly.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from boxes import codes
from boxes.aggregate import AggregateBox
from boxes.base import Box
from boxes.document import Plan
from boxes.errors import Denied
from boxes.expressions import nodes
from boxes.filter import FilterBox
from boxes.input import InputBox
from boxes.join import JoinBox
from boxes.map import MapBox
from boxes.output import OutputBox
from boxes.union import UnionBox

Origin = tuple[str, str]  # (source stream, its field)
_KNOWN = (InputBox, FilterBox, MapBox, UnionBox, AggregateBox, JoinBox, OutputBox)


@dataclass(frozen=True)
class Graph:
    boxes: dict[str, Box]
    consumers: dict[str, list[str]]  # one entry per reference, in plan order
    used: dict[str, frozenset[str]]  # per input: the attributes the query uses (not its time)
    sources: dict[str, frozenset[str]]  # per box: the inputs upstream of it
    # per box: output field -> the source fields it equals (a join's key: both sides')
    origins: dict[str, dict[str, frozenset[Origin]]]

    def resolver(self, point: str):
        """(stream, field) -> the one field of ``point``'s output carrying it, else None."""
        found: dict[Origin, list[str]] = defaultdict(list)
        for name, origins in self.origins[point].items():
            for origin in origins:
                found[origin].append(name)
        return lambda stream, field: (
            names[0] if len(names := found.get((stream, field), [])) == 1 else None
        )


def analyse(plan: Plan) -> Graph:
    """The plan's graph; REWRITE_UNSUPPORTED for a box type the rewriter does not know."""
    boxes = {b.name: b for b in plan.boxes}
    for box in plan.boxes:
        if not isinstance(box, _KNOWN):
            raise Denied(
                code=codes.REWRITE_UNSUPPORTED,
                details={"box": box.name},
                box=box.name,
                type=box.type_name,
            )
    consumers: dict[str, list[str]] = {name: [] for name in boxes}
    for box in plan.boxes:
        for up in box.upstream:
            consumers[up].append(box.name)
    sources: dict[str, frozenset[str]] = {}
    origins: dict[str, dict[str, frozenset[Origin]]] = {}
    for box in plan.boxes:
        sources[box.name] = (
            frozenset([box.name])
            if isinstance(box, InputBox)
            else frozenset().union(*(sources[u] for u in box.upstream))
        )
        origins[box.name] = _origins(box, origins)
    return Graph(boxes, consumers, _used(plan), sources, origins)


def _origins(
    box: Box, known: dict[str, dict[str, frozenset[Origin]]]
) -> dict[str, frozenset[Origin]]:
    if isinstance(box, InputBox):
        return {f: frozenset({(box.name, f)}) for f in box.schema.names}
    if isinstance(box, (FilterBox, OutputBox)):
        return dict(known[box.source])
    if isinstance(box, MapBox):
        up = known[box.source]
        return {
            f: up.get(e.node.name, frozenset()) if isinstance(e.node, nodes.Ref) else frozenset()
            for f, e in box.exprs
        }
    if isinstance(box, UnionBox):
        ups = [known[s] for s in box.sources]
        return {
            f: ups[0][f] if all(u[f] == ups[0][f] for u in ups) else frozenset()
            for f in box.schema.names
        }
    if isinstance(box, JoinBox):
        left, right = known[box.left], known[box.right]
        out = {o: left[i] for i, o in box.left_names}
        out.update({o: right[i] for i, o in box.right_names})
        out.update({k: left[k] | right[k] for k in box.on})  # a key equals both sides'
        return {f: out[f] for f in box.schema.names}
    return {}  # an aggregate's results are new tuples: no field is a source's field


def _used(plan: Plan) -> dict[str, frozenset[str]]:
    """Per input, the attributes that reach an output or decide which tuples do."""
    need: dict[str, set[str]] = defaultdict(set)
    for box in reversed(plan.boxes):
        mine = need[box.name]
        if isinstance(box, OutputBox):
            need[box.source] |= set(box.schema.names)
        elif isinstance(box, FilterBox):
            need[box.source] |= mine | box.where.fields
        elif isinstance(box, MapBox):
            # every expression is computed, read downstream or not
            need[box.source] |= {f for _, e in box.exprs for f in e.fields}
        elif isinstance(box, UnionBox):
            for source in box.sources:
                need[source] |= mine
        elif isinstance(box, AggregateBox):
            need[box.source] |= set(box.group_by) | {box.time}
            need[box.source] |= {f for _, a in box.aggregates for f in a.fields}
            need[box.source] |= box.where.fields if box.where is not None else set()
        elif isinstance(box, JoinBox):
            for source, names, time in (
                (box.left, box.left_names, box.times[0]),
                (box.right, box.right_names, box.times[1]),
            ):
                need[source] |= {i for i, o in names if o in mine or o == time}
                need[source] |= set(box.on)
    # The event time is the stream's timestamp, not one of its attributes (the paper's
    # SS(TS, A1..An)): a policy's ATTs never need to name it.
    return {
        name: frozenset(need[name] - {plan.input_schemas[name].event_time}) for name in plan.inputs
    }
