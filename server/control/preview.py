"""A data preview of one box of a running diagram (the editor's tap, issue 19).

This module decides what is computed and who sees what of it; the runtime computes it
(``Runtime.evaluate``), so neither the view nor this module touches Spark.

The box's tuples are computed again, as one Spark batch job, over the last tuples of the
diagram's inputs in the durable log: the diagram's own document with its outputs replaced by
one output reading the box, compiled like a deploy (level, cost ceilings), so a preview is
what the box makes of recent data, never a copy of what ran. Every window closes in a batch
run, so a window's preview may hold fewer tuples than it will live. The rows then pass the
viewer's filter exactly as an output's do (``Delivery.visible_to``: READ_TUPLE and
READ_AGGREGATE under the strong semantic, then the clearance), so a preview shows no tuple a
subscription would not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from boxes import codes
from boxes.arrival import ARRIVAL_COLUMN
from boxes.document import Plan
from boxes.errors import Conflict, NotFound
from boxes.labels import DENIED_COLUMN
from boxes.levels import LEVEL_COLUMN
from boxes.output import STRONG
from boxes.punctuations.fields import FieldPolicy, field_policy
from boxes.secfilter import user_fields
from boxes.sources import SOURCES, Labels
from boxes.types import Schema
from catalog import ObjectType, Subject
from catalog.objects import Resumable
from server.control.diagrams import affordable, plan_of, resolved
from server.control.relabel import relabeller
from server.control.rewrites import reader_rewrite
from server.ingest.here import here
from server.ingest.segments import tail
from server.runtime.source import frame_rows

OUTPUT = "preview"


def preview_document(doc: Mapping[str, Any], plan: Plan, box: str) -> dict[str, Any]:
    """``doc`` cut down to ``box`` and what it reads, with one output, ``preview``, reading
    ``box`` (an input or a box; an output previews the box it carries, relabelled by its
    ``on_result`` if it has one)."""
    outputs = doc.get("outputs") or {}
    policy = {}
    if box in outputs:
        policy = {k: v for k, v in outputs[box].items() if k == "on_result"}
        box = outputs[box]["from"]
    upstream = {b.name: b.upstream for b in plan.boxes}
    if box not in upstream or box in outputs:
        raise NotFound(what="box", name=box)
    needed, todo = set(), [box]
    while todo:
        name = todo.pop()
        if name not in needed:
            needed.add(name)
            todo.extend(upstream[name])
    return {
        **doc,
        "inputs": {k: v for k, v in doc["inputs"].items() if k in needed},
        "boxes": {k: v for k, v in (doc.get("boxes") or {}).items() if k in needed},
        "outputs": {OUTPUT: {"from": box, **policy}},
    }


def preview(svc, subject: Subject, diagram: str, box: str, rows: int) -> dict[str, Any]:
    """What ``subject`` may see of ``box``'s results over the last ``rows`` tuples of each of
    the running ``diagram``'s inputs (at most ``rows`` results, the newest)."""
    key = svc.catalog.objects.get(subject, ObjectType.DIAGRAM, diagram).name
    found = [r for r in svc.catalog.objects.resumable() if r.diagram.name == key]
    runtime = here(svc).runtime
    if not found or runtime is None:
        raise Conflict(code=codes.PREVIEW_NOT_RUNNING, diagram=diagram)
    (running,) = found
    doc, plan = _deployed(svc.catalog, subject, running)
    doc = preview_document(doc, plan, box)
    plan = resolved(plan_of(doc, running.schemas, running.derived, svc.catalog), svc.catalog)
    affordable(plan, svc.limits.cost_ceilings())
    if plan.derived():
        (upstream, *_) = sorted(plan.derived().values())
        raise Conflict(code=codes.PREVIEW_DERIVED, box=box, output=upstream)
    policy = field_policy(plan) if plan.governed else None
    inputs = {name: _recent(runtime.log, name, rows, policy) for name in plan.inputs}
    table = runtime.evaluate(plan, inputs)
    relabel = relabeller(svc.catalog, key, plan)
    if relabel is not None:
        table = relabel(OUTPUT, table)
    table = table.slice(max(0, table.num_rows - rows))
    labels = Labels.of(plan, running.sources)
    shown = user_fields(table.column_names)
    shown += [SOURCES, *([LEVEL_COLUMN] if LEVEL_COLUMN in table.column_names else [])]
    return {
        "diagram": diagram,
        "box": box,
        "fields": shown,
        "tuples": svc.delivery.visible_to(subject, labels, STRONG, table),
    }


def _deployed(catalog, subject: Subject, running: Resumable) -> tuple[dict[str, Any], Plan]:
    """The document and plan the diagram runs for ``subject``: rewritten for its deployer
    when a policy protects a stream it reads, or for a viewer whose own rewrite differs, as
    its variant would run (REWRITE_DENIED for a denied one: docs/rewrite.md)."""
    doc = running.diagram.document
    plan = resolved(plan_of(doc, running.schemas, running.derived, catalog), catalog)
    stored = catalog.rewrites.of(running.diagram)
    if stored is None:
        return doc, plan
    mine = reader_rewrite(catalog, running.diagram.public, doc, plan, stored.document, subject)
    rewritten = dict(stored.document if mine is None else mine.document)
    return rewritten, resolved(
        plan_of(rewritten, running.schemas, running.derived, catalog), catalog
    )


def _recent(log, stream: str, rows: int, policy: FieldPolicy | None) -> pa.Table:
    """The last ``rows`` acknowledged tuples of ``stream`` as an input reads them, with a
    governed plan's policy words."""
    (head,) = log.heads([stream]).values()
    frames = tail(log.directory(stream), head, rows)
    if not frames:
        return _empty(log.schema(stream), policy.heads if policy else (DENIED_COLUMN,))
    sets = policy.fields_of(stream) if policy else []
    grants = policy.grants_of(stream) if policy else []
    table = pa.concat_tables(
        [frame_rows(f, sets, grants, policy.width if policy else 1) for f in frames],
        promote_options="default",
    )
    return table.slice(max(0, table.num_rows - rows))


def _empty(schema: Schema, heads: Sequence[str]) -> pa.Table:
    arrival, level = pa.field(ARRIVAL_COLUMN, pa.int64()), pa.field(LEVEL_COLUMN, pa.int64())
    denied = [pa.field(name, pa.int64()) for name in heads]
    return pa.schema([arrival, *schema.arrow_schema(), level, *denied]).empty_table()
