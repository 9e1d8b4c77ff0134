"""Which outputs of a running diagram go on where they were when a new version replaces it.

Every output runs as its own Spark query with its own checkpoint (``server/runtime``). Spark
resumes a query from a checkpoint written by a changed one if only its stateless operators
changed (filters, projections), never if a stateful one did (windows, aggregates, joins:
their state's layout and meaning are the old query's). So an output may keep its checkpoint,
and with it its windows' and joins' state and its result log's positions, when the shape of
what feeds it is the same: the same inputs with the same schemas and label layout, the same
stateful boxes with the same parameters over the same schemas, and the same output schema;
filters and maps may differ (a map's new columns show in the schema a stateful box reads).
Anything else starts afresh from the inputs' heads, and the answer names the state dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from boxes import onescan
from boxes.base import Box
from boxes.document import Plan
from boxes.filter import FilterBox
from boxes.input import InputBox
from boxes.map import MapBox
from boxes.output import OutputBox
from boxes.union import UnionBox

TRANSPARENT = (FilterBox, MapBox)  # one row out per row in, or none: no state of their own


@dataclass(frozen=True)
class Swap:
    """Per output of the new version: kept (resumes from its checkpoint), dropped (with the
    stateful boxes whose state goes, none for a stateless output) or new."""

    kept: list[str] = field(default_factory=list)
    dropped: dict[str, list[str]] = field(default_factory=dict)
    new: list[str] = field(default_factory=list)
    shared: list[str] = field(default_factory=list)  # dropped: its state was not its own

    def to_dict(self, public: dict[str, str]) -> dict[str, Any]:
        """The answer's ``swap``, by public output names (``public``: key -> name)."""

        def name(output: str) -> str:
            return public.get(output, output)

        dropped = [
            {"output": name(o), "state": boxes, "message": _dropped(name(o), boxes)}
            for o, boxes in sorted(self.dropped.items())
        ] + [
            {"output": name(o), "state": [], "message": _unshared(name(o))}
            for o in sorted(self.shared)
        ]
        return {
            "kept": sorted(name(o) for o in self.kept),
            "dropped": dropped,
            "new": sorted(name(o) for o in self.new),
        }


def _dropped(output: str, boxes: list[str]) -> str:
    if not boxes:
        return f"{output} starts afresh from the newest input: what fed it changed"
    return (
        f"{output} starts afresh from the newest input: the state of "
        f"{', '.join(boxes)} (windows, groups, join buffers) is dropped"
    )


def _unshared(output: str) -> str:
    return (
        f"{output} starts afresh from the newest input: it ran in an execution shared with "
        "other diagrams, whose state is not its own to keep"
    )


def judged(old: Plan, new: Plan) -> Swap:
    """Which of ``new``'s outputs may resume from ``old``'s checkpoints."""
    swap = Swap()
    same_inputs = _inputs(old) == _inputs(new)
    old_boxes, new_boxes = _by_name(old), _by_name(new)
    old_scans, new_scans = onescan.unions(old), onescan.unions(new)
    for output in new.outputs:
        if output not in old.outputs:
            swap.new.append(output)
        elif same_inputs and _shape(old_boxes, output, old_scans) == _shape(
            new_boxes, output, new_scans
        ):
            swap.kept.append(output)
        else:
            swap.dropped[output] = _stateful_upstream(old_boxes, output)
    return swap


def dropping(swap: Swap, outputs: list[str]) -> Swap:
    """``swap`` with those of its kept outputs not in ``outputs`` (the runtime could not carry
    them: ``Runtime.carry``) counted as dropped."""
    lost = [o for o in swap.kept if o not in outputs]
    kept = [o for o in swap.kept if o in outputs]
    return Swap(kept, swap.dropped, swap.new, [*swap.shared, *lost])


def _inputs(plan: Plan) -> dict[str, Any]:
    return {
        "inputs": plan.inputs,
        "schemas": {n: s.to_dict() for n, s in sorted(plan.input_schemas.items())},
        "layout": {
            k: v for k, v in plan.to_dict().items() if k not in ("name", "outputs", "boxes")
        },
    }


def _by_name(plan: Plan) -> dict[str, Box]:
    return {b.name: b for b in plan.boxes}


def _shape(boxes: dict[str, Box], name: str, scans: frozenset[str]) -> Any:
    """What of the path into box ``name`` a checkpoint depends on (names left out), the
    unions read as one scan ``scans`` among it (a branch is a source: ``boxes/onescan.py``)."""
    box = boxes[name]
    upstream = [_shape(boxes, u, scans) for u in box.upstream]
    if isinstance(box, InputBox):
        return ["input", box.name, box.output]
    if isinstance(box, TRANSPARENT):
        return upstream[0]
    if isinstance(box, UnionBox):
        return ["union", upstream, name in scans]
    if isinstance(box, OutputBox):
        return ["output", box.schema.to_dict(), upstream]
    read = [boxes[u].schema.to_dict() for u in box.upstream]
    return [box.type_name, _own_parameters(box), read, upstream]


def _own_parameters(box: Box) -> dict[str, Any]:
    """A box's parameters but the names of the boxes it reads (``_shape`` follows those)."""
    refs = set(box.upstream)

    def is_ref(value: Any) -> bool:
        if isinstance(value, list):
            return bool(value) and all(isinstance(v, str) and v in refs for v in value)
        return isinstance(value, str) and value in refs

    return {k: v for k, v in box.parameters().items() if not is_ref(v)}


def _stateful_upstream(boxes: dict[str, Box], name: str) -> list[str]:
    """The boxes feeding ``name`` that keep state, in data-flow order."""
    found: list[str] = []
    todo = [name]
    while todo:
        box = boxes[todo.pop()]
        if not isinstance(box, (InputBox, OutputBox, UnionBox, *TRANSPARENT)):
            found.append(box.name)
        todo.extend(box.upstream)
    order = list(boxes)
    return sorted(set(found), key=order.index)
