"""What a viewer of a diagram's status may see of its counts (docs/editor.md, "Metrics").

Every count the runtime reports (rows through a box, an output's rows and rates, the rows its
state holds) is of all the tuples that passed, before any SecFilter: a covert channel. A box
whose input is filtered on ``price > 100`` tells, by its rows out, how many tuples of its
stream had that price. So VIEW_OBJECT on the diagram shows its state, never its counts: a
box's counts (an output's counters too) are shown only to a session that may READ_TUPLE every
source stream the box's tuples may derive from, now, within the clearance of a diagram at a
level and, for a diagram rewritten under access-control policies, only when the session's own
rewrite is the same (the gate its outputs' subscribers pass). READ_AGGREGATE is not enough:
an aggregate box's rows out count its distinct group keys, which that right does not grant.
A failure's message may quote a tuple's value (a Spark cast error does), so it is shown only
to a session that may see every box's counts; the failed output is named to every viewer.
"""

from __future__ import annotations

from typing import Any

from boxes import observed
from boxes.errors import SluiceError
from catalog import Subject
from catalog.authorizer import playing
from catalog.names import public_of

WITHHELD_ERROR = "the diagram failed; its error is shown to those who may read all its sources"


def shown(svc, subject: Subject, name: str, progress: dict[str, Any] | None) -> dict | None:
    """``progress`` (``Runtime.status``) with the counts and error ``subject`` may not see
    left out; ``withheld`` names the boxes whose counts were left out."""
    if progress is None:
        return None
    plan = svc.runtime.plan(name)
    if plan is None:  # never deployed here: nothing counted
        return {**progress, "withheld": []}
    allowed = _readable_boxes(svc, subject, plan)
    boxes = progress.get("boxes", {})
    withheld = sorted(public_of(b) for b in set(boxes) - allowed)
    error = progress["error"]
    return {  # outputs run under their keys, shown by their public names (``catalog.names``)
        **progress,
        "error": WITHHELD_ERROR if error is not None and withheld else error,
        "outputs": {public_of(o): p for o, p in progress["outputs"].items() if o in allowed},
        "boxes": {public_of(b): m for b, m in boxes.items() if b in allowed},
        "withheld": withheld,
    }


def _readable_boxes(svc, subject: Subject, plan) -> set[str]:
    """The boxes whose every possible source ``subject`` may READ_TUPLE now (none if it is
    not cleared for the diagram's level or refused by its rewrite's gate)."""
    if not plan.outputs:
        return set()
    first = next(iter(plan.outputs))
    labels = svc.delivery.labels(first)
    if labels is None:
        return set()
    try:
        if svc.delivery.route(subject, first) != first:  # a variant's reader: not these boxes
            return set()
    except SluiceError:
        return set()
    catalog = svc.catalog
    if plan.clearance is not None:
        snapshot = catalog.core.snapshot
        roles = playing(subject, snapshot)
        if not snapshot.levels.dominates(snapshot.levels.clearance(roles), plan.clearance).allowed:
            return set()
    readable = catalog.sessions.readable_sources(subject)
    return {
        box
        for box, names in observed.sources(plan).items()
        if all(n in labels.sources and readable >> labels.sources[n] & 1 for n in names)
    }
