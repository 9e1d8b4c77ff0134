"""Every output batch passes the SecFilter once per subscriber, with permissions as they are now.

The runtime calls :meth:`Delivery.on_batch` (in a Spark callback thread) with an Arrow table of
user fields plus the ``_label`` column. For each subscriber the session's readable set is read
from the catalog *at that moment* (``readable_sources``), so a revoked READ_TUPLE, a logout or
a disabled user filters the very next batch; a lost SUBSCRIBE ends the subscription.
Subscribers who share a readable set share one answer (``boxes.secfilter.deliveries``), and each
delivered tuple carries ``_sources``, the sorted names of the inputs in its label. Labels never
leave the server.

A *subscription* is one socket's interest in one output (``subscribe(sid, subject, output)``),
checked for SUBSCRIBE again at every batch; the runtime feeds this class through each output's
one tap (``server.runtime.outputs.Tap``).
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from boxes.errors import SluiceError
from boxes.labels import LABEL_COLUMN
from boxes.secfilter import deliveries, label_sources, readable_mask
from boxes.types import Schema
from catalog import Action, Catalog, ObjectType, Subject
from server.http.errors import answer
from server.runtime.outputs import BATCH_KEY, NEXT_KEY

TUPLES_EVENT = "tuples"
ENDED_EVENT = "subscription_ended"


@dataclass(frozen=True)
class Labels:
    """How an output's label bits map to input names and catalog source indexes."""

    inputs: tuple[str, ...]  # bit i of a label <=> inputs[i]
    sources: Mapping[str, int]  # input name -> its catalog source index

    def mask(self, readable: int):
        names = [n for n in self.inputs if readable >> self.sources[n] & 1]
        return readable_mask(self.inputs, names)


def _jsonable(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.isoformat()
    return value


def rows(table: pa.Table, inputs: Sequence[str], picked) -> list[dict]:
    """The picked rows (indexes) as JSON-ready dicts with ``_sources``, without the label."""
    sources = label_sources(table, inputs)
    fields = table.drop_columns([LABEL_COLUMN]).take(pa.array(picked, pa.int64())).to_pylist()
    return [
        {**{k: _jsonable(v) for k, v in row.items()}, "_sources": sources[i]}
        for row, i in zip(fields, picked, strict=False)
    ]


def position_of(table: pa.Table) -> dict[str, int]:
    """Where a live batch sits in its output's result log: its batch id, and the position to
    read from (``GET /outputs/NAME/results?from=``) for what follows it."""
    metadata = table.schema.metadata or {}
    if BATCH_KEY not in metadata:
        return {}
    return {"batch": int(metadata[BATCH_KEY]), "next": int(metadata[NEXT_KEY])}


class Delivery:
    def __init__(self, catalog: Catalog, emit) -> None:
        """``emit(event, data, to=sid)`` sends to one socket (``socketio.emit``)."""
        self.catalog = catalog
        self.emit = emit
        self._labels: dict[str, Labels] = {}
        self.schemas: dict[str, Schema] = {}
        self._subscribers: dict[str, dict[str, Subject]] = {}
        self._lock = threading.Lock()

    def register(self, outputs: Mapping[str, Schema], labels: Labels) -> None:
        """A diagram was deployed: how to read its outputs' labels, and their schemas."""
        with self._lock:
            for output, schema in outputs.items():
                self._labels[output] = labels
                self.schemas[output] = schema

    def subscribe(self, sid: str, subject: Subject, output: str) -> None:
        with self._lock:
            self._subscribers.setdefault(output, {})[sid] = subject

    def unsubscribe(self, sid: str, output: str) -> bool:
        with self._lock:
            return self._subscribers.get(output, {}).pop(sid, None) is not None

    def forget(self, sid: str) -> None:
        """A socket went away: drop all its subscriptions."""
        with self._lock:
            for subscribers in self._subscribers.values():
                subscribers.pop(sid, None)

    def visible_rows(self, subject: Subject, output: str, table: pa.Table) -> list[dict]:
        """What one session may see of ``table`` now (the recent-results cache)."""
        labels = self._labels.get(output)
        if labels is None or table.num_rows == 0:
            return []
        mask = labels.mask(self.catalog.sessions.readable_sources(subject))
        (picked,) = deliveries(table, [mask])
        return rows(table, labels.inputs, picked)

    def _still_subscribed(self, sid: str, subject: Subject, output: str) -> bool:
        try:
            self.catalog.objects.require(subject, Action.SUBSCRIBE, ObjectType.OUTPUT, output)
            return True
        except SluiceError as err:
            self.unsubscribe(sid, output)
            self.emit(ENDED_EVENT, {"output": output, **answer(err)}, to=sid)
            return False

    def on_batch(self, output: str, table: pa.Table) -> None:
        """Filter one result batch for every subscriber of ``output`` and send each its part."""
        with self._lock:
            labels = self._labels.get(output)
            subscribers = list(self._subscribers.get(output, {}).items())
        if labels is None or not subscribers or table.num_rows == 0:
            return
        subscribers = [
            (sid, who) for sid, who in subscribers if self._still_subscribed(sid, who, output)
        ]
        if not subscribers:
            return
        readable = self.catalog.sessions.readable_sources
        picks = deliveries(table, [labels.mask(readable(who)) for _, who in subscribers])
        if not any(len(picked) for picked in picks):
            return
        decoded = rows(table, labels.inputs, range(table.num_rows))  # once for everyone
        position = position_of(table)
        for (sid, _), picked in zip(subscribers, picks, strict=False):
            if len(picked):
                tuples = [decoded[i] for i in picked]
                self.emit(TUPLES_EVENT, {"output": output, "tuples": tuples, **position}, to=sid)
