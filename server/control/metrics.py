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

The backlog (rows waiting in an input's log, an output's event-time lag, whether the diagram
falls behind: docs/editor.md, "Backlog") counts the same tuples and follows the same rule.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Mapping
from typing import Any

from boxes import observed
from boxes.document import Plan
from boxes.errors import SluiceError
from catalog import Subject
from catalog.authorizer import playing
from catalog.names import public_of
from server.runtime.checkpoints import offset_seqs
from server.runtime.heads import result_key

WITHHELD_ERROR = "the diagram failed; its error is shown to those who may read all its sources"
# A diagram falls behind when an output would need longer than this to read what waits for it
# at the rate it processed its last batch (or rows wait and no batch ran for this long).
BEHIND_SECONDS = 10.0


def shown(
    svc, runtime, subject: Subject, name: str, progress: dict[str, Any] | None
) -> dict | None:
    """``progress`` (``Runtime.status``) with the counts and error ``subject`` may not see
    left out; ``withheld`` names the boxes whose counts were left out. ``runtime``: the one
    that reported ``progress``."""
    if progress is None:
        return None
    plan = runtime.plan(name)
    if plan is None:  # never deployed here: nothing counted
        return {**progress, "withheld": []}
    allowed = _readable_boxes(svc, subject, plan)
    boxes = progress.get("boxes", {})
    withheld = sorted(public_of(b) for b in set(boxes) - allowed)
    error = progress["error"]
    waiting, lags = backlog(runtime, name, plan)
    outputs = {
        o: {**p, **lags.get(o, _UNKNOWN)} for o, p in progress["outputs"].items() if o in allowed
    }
    return {  # outputs run under their keys, shown by their public names (``catalog.names``)
        **progress,
        "error": WITHHELD_ERROR if error is not None and withheld else error,
        "outputs": {public_of(o): p for o, p in outputs.items()},
        "boxes": {public_of(b): m for b, m in boxes.items() if b in allowed},
        "withheld": withheld,
        "backlog": {public_of(b): n for b, n in waiting.items() if b in allowed},
        "behind": any(p["behind"] for p in outputs.values()),
    }


_UNKNOWN = {"rows_waiting": None, "event_lag_seconds": None, "behind": False}


def backlog(runtime, name: str, plan: Plan) -> tuple[dict[str, int], dict[str, dict[str, Any]]]:
    """Per input box, the most rows any output's query has yet to read from its log (what
    waits on the arrows out of it); per output, the rows its query has yet to read from all
    its inputs, how far the newest event time it read is behind the clock, and whether it
    falls behind (``BEHIND_SECONDS``). Measured from the runtime's log heads and the offsets
    Spark's last progress read up to; an output with no batch yet is left out."""
    keys = {s: s for s in plan.streams()} | {b: result_key(o) for b, o in plan.derived().items()}
    heads = _heads(runtime, plan, keys)
    lineages = observed.lineages(plan)
    per_box: dict[str, int] = {}
    per_output: dict[str, dict[str, Any]] = {}
    for output, report in runtime.last_progress(name).items():
        read = _read_up_to(report)
        mine = lineages[output] & set(keys)
        waiting = {b: heads[b] - read[keys[b]] for b in mine if b in heads and keys[b] in read}
        if report is None or len(waiting) < len(mine):
            continue
        for box, rows in waiting.items():
            per_box[box] = max(per_box.get(box, 0), rows)
        rows = sum(waiting.values())
        per_output[output] = {
            "rows_waiting": rows,
            "event_lag_seconds": _event_lag(report),
            "behind": falls_behind(rows, report),
        }
    return per_box, per_output


def falls_behind(rows: int, report: Mapping[str, Any]) -> bool:
    """Whether ``rows`` waiting take longer than ``BEHIND_SECONDS`` to read at the rate of the
    last batch, or wait with no batch run for that long."""
    if rows <= 0:
        return False
    rate = report.get("processedRowsPerSecond") or 0.0
    if rate > 0:
        return rows / rate > BEHIND_SECONDS
    started = _instant(report.get("timestamp"))
    return started is None or time.time() - started > BEHIND_SECONDS


def _heads(runtime, plan: Plan, keys: Mapping[str, str]) -> dict[str, int]:
    """Per input box, the row position its log ends at (a log gone: none)."""
    derived = [keys[b] for b in plan.derived()]
    try:
        ends = runtime.log.heads(list(plan.streams()))
        ends |= runtime.result_logs.heads(derived) if derived else {}
    except (KeyError, SluiceError):  # a log removed meanwhile: its failure says so
        return {}
    return {box: ends[key].seq for box, key in keys.items()}


def _read_up_to(report: Mapping[str, Any] | None) -> dict[str, int]:
    """Per log key, the row position the last batch read up to (``source.py``'s offsets)."""
    read: dict[str, int] = {}
    for source in (report or {}).get("sources", []):
        offset = source.get("endOffset") or {}
        if isinstance(offset, str):  # Spark keeps an offset as text when it does not parse it
            offset = json.loads(offset)
        read |= offset_seqs(offset)
    return read


def _event_lag(report: Mapping[str, Any]) -> float | None:
    """Seconds from the newest event time the last batch read to now (None: it read none)."""
    newest = _instant((report.get("eventTime") or {}).get("max"))
    return None if newest is None else round(max(0.0, time.time() - newest), 1)


def _instant(text: str | None) -> float | None:
    """Spark's ISO-8601 UTC time (``2026-03-02T10:00:00.000Z``) as seconds since the epoch."""
    if not text:
        return None
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


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
