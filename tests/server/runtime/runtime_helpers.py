"""What the runtime tests share: a schema, diagram documents, and ways to await results."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pyarrow as pa

from boxes.document import validate
from boxes.types import parse_schema
from catalog.clearance import EMPTY, Admission
from server.ingest.segments import list_segments, scan, segment_path
from server.runtime.outputs import decode_batch
from server.runtime.resultlog import object_bases, read_object
from server.runtime.storage import Location

TRADE, _ = parse_schema(
    {"fields": {"time": "timestamp", "symbol": "string", "price": "double"}, "event_time": "time"},
    "trade",
)
WAIT = 240  # seconds; generous because the machine's two cores are shared


def union_doc(name: str, inputs: list[str], where: str | None = None) -> dict:
    boxes = {"merged": {"type": "union", "in": inputs}} if len(inputs) > 1 else {}
    source = "merged" if boxes else inputs[0]
    if where:
        boxes["kept"] = {"type": "filter", "in": source, "where": where}
        source = "kept"
    return {
        "version": 1,
        "name": name,
        "inputs": {i: {} for i in inputs},
        "boxes": boxes,
        "outputs": {f"{name}_out": {"from": source}},
    }


def plan_of(doc: dict):
    return validate(doc, {name: TRADE for name in doc["inputs"]})


class Collector:
    """An ``on_batch`` callback that keeps every row and lets a test wait for a condition."""

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self._changed = threading.Condition()

    def __call__(self, output: str, table) -> None:
        with self._changed:
            self.rows.extend(table.to_pylist())
            self._changed.notify_all()

    def wait_for_rows(self, count: int, timeout: float = WAIT) -> list[dict]:
        deadline = time.monotonic() + timeout
        with self._changed:
            while len(self.rows) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{len(self.rows)} rows after {timeout}s; wanted {count}")
                self._changed.wait(left)
            return list(self.rows)


def at_level(level: int) -> Admission:
    """Every tuple of a batch at ``level``, as admission gives a company stream's."""
    return Admission(EMPTY, level, None)


def wait_until(condition, timeout: float = WAIT, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while not (result := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not met after {timeout}s")
        time.sleep(0.05)  # poll: any condition, most with no event to await
    return result


def read_results(where: str | os.PathLike) -> list[tuple[int, pa.Table]]:
    """Every retained ``(batch id, table)`` of a result log (a directory or a URL), oldest
    first; read-only, so a test may read it while the server writes."""
    place = Location.of(where)
    if place.local:
        directory = Path(place)
        segments = (scan(segment_path(directory, base)) for base in list_segments(directory))
        frames = [frame for found in segments for frame, _ in found]
    else:
        frames = [f for b in object_bases(place) if (f := read_object(place, b)) is not None]
    return [decode_batch(frame.payload) for frame in frames]


def shared_results(diagrams: str | os.PathLike, plan, output: str) -> Location:
    """Where the result log a member's ``output`` reads lives, under the runtime's diagrams
    directory: its host's log of the output, or of its filters' rows if the host runs its
    prefix (``server/runtime/overlap.py``)."""
    from server.runtime import overlap, sharing
    from server.runtime.checkpoints import DiagramDir
    from server.runtime.versions import fingerprint

    key, shared, residual = overlap.placement(plan)
    host, names = sharing.hosted(shared, key)
    directory = DiagramDir(diagrams, host.name, fingerprint(host))
    if residual is not None:
        return directory.residual_results(residual.name)
    return directory.results(names[output])
