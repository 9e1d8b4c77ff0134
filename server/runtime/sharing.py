"""Shared execution: diagrams whose plans are the same but for names run as one.

Two plans share when they read the same inputs through the same boxes with the same
parameters, at the same level, under the same rewrite and label layout: everything a plan's
fingerprint covers except the diagram's, boxes' and outputs' own names (``key``). The first
such diagram deployed starts a *host*: a runtime diagram of its own (``HOST`` + key) whose
outputs are named after the key (``hosted``), so it outlives any one member. Each member's
output is the host's result log seen from the member's *base*, the host's log position when
the member joined (``SharedOutput``, ``from_base``): member position p is host position
base + p.

A member joins where the host's last batch ended, a batch boundary, so what it gets is what
the plan run alone from those input positions gives. A member of a plan with state (windows,
aggregates, joins) joins a running host only if the host has read nothing yet: its windows
would otherwise hold tuples from before the member came. Such a diagram then runs alone.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

import pyarrow as pa

from boxes import codes
from boxes.base import Box
from boxes.document import Plan
from boxes.errors import Conflict, Gone
from boxes.filter import FilterBox
from boxes.input import InputBox
from boxes.map import MapBox
from boxes.output import OutputBox
from boxes.union import UnionBox
from server.runtime.outputs import BATCH_KEY, LOG_KEY, NEXT_KEY, Asked, OutputSink, Results

HOST = "shared."  # a host's runtime id: HOST + key (catalog names have no dots)
STATELESS = (InputBox, FilterBox, MapBox, UnionBox, OutputBox)  # each result row is one input row


def is_host(diagram_id: str) -> bool:
    """Whether a runtime id is a shared execution's host, not a diagram of the catalog's."""
    return diagram_id.startswith(HOST)


def key(plan: Plan) -> str:
    """What two plans must have alike to share one execution: the plan with every name of
    its own (diagram, boxes, outputs, derived inputs) replaced by the box's place in the plan.
    Stream inputs keep theirs: they say what is read."""
    own = {
        box.name: f"#{place}"
        for place, box in enumerate(plan.boxes)
        if not (isinstance(box, InputBox) and box.output is None)
    }
    boxes = [
        {
            **box.describe(),
            "name": own.get(box.name, box.name),
            "in": [own.get(up, up) for up in box.upstream],
            "parameters": _renamed(box.parameters(), own, set(box.upstream)),
        }
        for box in plan.boxes
    ]
    described = {
        **{k: v for k, v in plan.to_dict().items() if k not in ("name", "outputs", "boxes")},
        "schemas": {n: s.to_dict() for n, s in sorted(plan.input_schemas.items())},
        "boxes": boxes,
    }
    text = json.dumps(described, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _renamed(value: Any, own: dict[str, str], upstream: set[str]) -> Any:
    """A box's parameters with the names of the boxes it reads replaced (and nothing else:
    a field's name that happens to be a box's stays, and the schemas in the key tell such
    plans apart anyway)."""
    if isinstance(value, str):
        return own.get(value, value) if value in upstream else value
    if isinstance(value, list):
        return [_renamed(v, own, upstream) for v in value]
    if isinstance(value, dict):
        return {k: _renamed(v, own, upstream) for k, v in value.items()}
    return value


def hosted(plan: Plan, shared: str) -> tuple[Plan, dict[str, str]]:
    """The host's plan for key ``shared`` and, per output of ``plan``, the host's output it
    reads. The host's plan is the same whichever member's plan it is made from (so is its
    fingerprint, its checkpoint's version): operators are named ``b<place>``, outputs
    ``<key>.<place>``; inputs keep their names, which the key holds. ValueError for a box
    that reads its upstream through a field not in ``REFERENCES``: it cannot be renamed."""
    names = {
        box.name: f"{shared}.{place}" if isinstance(box, OutputBox) else f"b{place}"
        for place, box in enumerate(plan.boxes)
        if not isinstance(box, InputBox)
    }
    boxes = tuple(_renamed_box(box, names) for box in plan.boxes)
    outputs = {names[name]: schema for name, schema in plan.outputs.items()}
    host = dataclasses.replace(plan, name=HOST + shared, boxes=boxes, outputs=outputs)
    return host, {name: names[name] for name in plan.outputs}


REFERENCES = ("source", "left", "right", "sources")  # the fields boxes name their upstream in


def _renamed_box(box: Box, names: dict[str, str]) -> Box:
    if isinstance(box, InputBox):
        return box
    changes: dict[str, Any] = {"name": names[box.name]}
    for ref in REFERENCES:
        value = getattr(box, ref, None)
        if isinstance(value, str):
            changes[ref] = names.get(value, value)
        elif isinstance(value, tuple):
            changes[ref] = tuple(names.get(v, v) for v in value)
    renamed = dataclasses.replace(box, **changes)  # type: ignore[type-var]
    if renamed.upstream != tuple(names.get(up, up) for up in box.upstream):
        raise ValueError(f"box type {box.type_name} names its upstream elsewhere")
    return renamed


def stateless(plan: Plan) -> bool:
    return all(isinstance(box, STATELESS) for box in plan.boxes)


def member_log(host_log: str, base: int) -> str:
    """The identity of a member's result log: its host's seen from its base (a member that
    joins again at another base reads another log)."""
    return f"{host_log}.{base}"


def from_base(table: pa.Table, base: int, since: int) -> pa.Table | None:
    """A host's batch (positioned, as its sink hands batches to taps) as a member that joined
    at ``base`` sees it: its rows at host position ``since`` and after, at the member's
    positions; None if it has none."""
    metadata = table.schema.metadata or {}
    end = int(metadata[NEXT_KEY])
    if end <= since:
        return None
    first = end - table.num_rows
    cut = table.slice(max(0, since - first))
    return cut.replace_schema_metadata(
        {
            BATCH_KEY: metadata.get(BATCH_KEY, b"-1"),
            NEXT_KEY: str(end - base).encode(),
            LOG_KEY: member_log(metadata[LOG_KEY].decode(), base).encode(),
        }
    )


class SharedOutput:
    """A member's output: reads of the host's output shifted by the member's base."""

    def __init__(self, name: str, host: OutputSink, base: int) -> None:
        self.name, self.host, self.base = name, host, base
        self.log_id = member_log(host.log_id, base)

    def read_from(self, start: int, max_rows: int, asked: Asked | None = None) -> Results:
        """See ``OutputSink.read_from``; the positions refusals name are the member's."""
        asked = asked or Asked(self.name)
        asked.check(self.log_id)
        try:
            read = self.host.read_from(self.base + start, max_rows, Asked(asked.output))
        except Gone as gone:
            oldest = max(0, int(gone.params.get("oldest", self.base)) - self.base)
            raise Gone(code=codes.RESULTS_EXPIRED, output=asked.output, oldest=oldest) from None
        except Conflict as beyond:
            newest = int(beyond.params["newest"]) - self.base
            raise Conflict(
                code=codes.RESULTS_BEYOND_END, output=asked.output, start=start, newest=newest
            ) from None
        return Results(
            read.tables,
            start=start,
            next=read.next - self.base,
            oldest=max(0, read.oldest - self.base),
            log=self.log_id,
        )

    def recent(self, n: int | None = None) -> pa.Table | None:
        return self.host.recent(n, since=self.base)

    def stats(self) -> dict:
        stats = self.host.stats()
        head = stats["next_position"] - self.base
        return {
            **stats,
            "rows": head,
            "oldest_position": max(0, stats["oldest_position"] - self.base),
            "next_position": head,
        }
