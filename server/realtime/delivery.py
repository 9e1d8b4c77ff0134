"""Every output batch passes the SecFilter once per audience, with permissions as they are now.

The runtime calls :meth:`Delivery.on_batch` (in a Spark callback thread) with an Arrow table of
user fields plus the ``_label`` column. Each subscriber is decided with the catalog *as it is
at that batch* (``catalog.sessions.source_rights``), so a revoked READ_TUPLE, a logout or a
disabled user filters the very next batch; a lost SUBSCRIBE ends the subscription. "At that
batch" holds across servers too: a batch is filtered with every change committed before it,
on whichever server (``Core.current``: one look at a shared catalog's database per batch).
That one snapshot decides the whole batch (``decided_of``): SUBSCRIBE, a relayed batch's
rewrite, rights, clearances, roles and the roles a ``policy`` event names are all read from
it, never from a later one, so a change committed while a batch is decided (a revoke, then a
clearance raise) cannot pair a right of before it with a clearance of after it; replays and
results reads alike.
Subscriptions decided alike form an audience (``server.realtime.audiences``): the batch is
filtered (``boxes.secfilter.visible``), built and encoded once per audience and sent once, to
its socket.io room; the audiences are decided again whenever the snapshot changes, before
anything is sent (``server.realtime.settling``). Each delivered tuple carries ``_sources``,
the sorted names of the inputs in its label. Labels never leave the server.

Each output applies its own semantic (``boxes/output.py``: strong by default, weak if its owner
chose it), and an output whose labels carry raw sources apart (``_raw``) lets a subscriber's
READ_AGGREGATE rights count for the sources its tuples only summarise (``boxes/secfilter.py``):
both rights are read from the catalog at every batch, like the readable set.

An output of a diagram at a level also carries ``_level`` (``boxes/levels.py``): a subscriber
then receives only the rows its clearance (its active roles', as they are at that batch)
dominates, on top of the SecFilter, and each delivered tuple shows its level per conflict-of-
interest class (``{"banks": "A"}``; public is ``{}``) as ``_level`` beside ``_sources``.

An output of a plan governed by security punctuations carries ``_sp_denied``, the roles the
sps of the tuples a row derives from do not all grant (``boxes/punctuations/fields.py``): a
subscriber then receives a row only if one of its active roles (their catalog bits, as they
are at that batch) may read it, on top of the SecFilter and the clearance; and ``_sp_hidden``
where attribute-level sps may hide some fields apart: such a field is null for a subscriber
none of whose active roles may read it, and named in the tuple's ``_hidden``; a row whose
every field is hidden is not delivered. These columns never leave the server. Before the
live rows it governs, a subscriber receives the ``policy`` event: which of its active roles
the rows' policy lets read them, sent again whenever that changes
(the paper's propagation, as Figure 10's ``policy_sent``; other roles are not named), in
replays (``subscribe`` with ``from``: ``server.realtime.replay``) as in live batches.

A *subscription* is one socket's interest in one output (``subscribe(sid, subject, output)``),
checked for SUBSCRIBE again at every batch; the runtime feeds this class through each output's
one tap (``server.runtime.taps.Tap``).
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from boxes import codes
from boxes.errors import Conflict, SluiceError
from boxes.labels import DENIED_COLUMN, RESERVED
from boxes.levels import LEVEL_COLUMN
from boxes.output import STRONG
from boxes.punctuations.words import granted_words, to_ints
from boxes.secfilter import Seen, label_sources, visible
from boxes.sources import SOURCES, Labels
from boxes.types import Schema
from catalog import Catalog, Subject
from catalog.names import public_of
from catalog.snapshot import Snapshot
from server.control.variants import Gate
from server.edge import stages
from server.http.errors import answer
from server.realtime.audiences import Audience
from server.realtime.replay import Replays, position_of
from server.realtime.rooms import Transport
from server.realtime.settling import PARKED, Settling, decided_of

log = logging.getLogger(__name__)
TUPLES_EVENT = "tuples"
ENDED_EVENT = "subscription_ended"
MISSED_EVENT = "missed"
POLICY_EVENT = "policy"
MOVED_EVENT = "subscription_moved"
HIDDEN = "_hidden"  # a delivered tuple's fields its sps hide from the subscriber (null there)


def _jsonable(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.isoformat()
    return value


def rows(table: pa.Table, inputs: Sequence[str], picked, policy=None) -> list[dict]:
    """The picked rows (indexes) as JSON-ready dicts with ``_sources`` (and ``_level``, read
    with the catalog's ``policy``, for an output at a level), without the label bits."""
    sources = label_sources(table, inputs)
    labels = [c for c in RESERVED if c in table.column_names]
    fields = table.drop_columns(labels).take(pa.array(picked, pa.int64())).to_pylist()
    out = [
        {**{k: _jsonable(v) for k, v in row.items()}, SOURCES: sources[i]}
        for row, i in zip(fields, picked, strict=False)
    ]
    if LEVEL_COLUMN in table.column_names:
        for row in out:
            row[LEVEL_COLUMN] = policy.level_of(row.pop(LEVEL_COLUMN) & (1 << 64) - 1)
    return out


def hidden_from(shown: list[dict], hidden: Mapping[str, np.ndarray]) -> list[dict]:
    """The ``shown`` rows as their reader sees them (``hidden``: ``Seen.hidden`` for them):
    each field its sps hide from it is null and named in ``_hidden``."""
    if not hidden:
        return shown
    out = []
    for i, row in enumerate(shown):
        names = [n for n, hides in hidden.items() if hides[i]]
        out.append({**row, **dict.fromkeys(names), HIDDEN: names} if names else row)
    return out


def policy_runs(table: pa.Table, picked, active: int) -> list[tuple[int, np.ndarray]]:
    """A subscriber's picked rows of a governed output in runs, in order, of one answer to
    "which of its active roles (``active``) may read the row": ``(those roles, rows)``."""
    picked = np.asarray(picked, dtype=np.int64)
    if not len(picked):
        return []
    denied = table.column(DENIED_COLUMN).take(pa.array(picked))
    granted = granted_words(denied, active)
    changes = np.flatnonzero(np.any(np.diff(granted, axis=0) != 0, axis=1))
    cuts = [0, *(changes + 1).tolist(), len(picked)]
    masks = to_ints(granted[cuts[:-1]])
    return [(m, picked[a:b]) for m, a, b in zip(masks, cuts, cuts[1:], strict=False)]


def role_names(snapshot, mask: int) -> tuple[str, ...]:
    """The roles whose bits ``mask`` holds, by name."""
    return tuple(sorted(r for r, bit in snapshot.role_bits.items() if mask >> bit & 1))


Runs = list[tuple[tuple[str, ...] | None, list[dict]]]


def runs_of(table: pa.Table, shown: list[dict], seen: Seen, roles: int, snapshot) -> Runs:
    """A reader's rows (``shown``: ``seen.rows`` as ``rows`` gives them) with the fields hidden
    from it null, in order, in runs of one policy (``policy_runs``: the names, in ``snapshot``,
    of the reader's ``roles`` it grants; None for an output no sp governs)."""
    shown = hidden_from(shown, seen.hidden)
    if DENIED_COLUMN not in table.column_names:
        return [(None, shown)] if shown else []
    out: Runs = []
    at = 0
    for granted, run in policy_runs(table, seen.rows, roles):
        out.append((role_names(snapshot, granted), shown[at : at + len(run)]))
        at += len(run)
    return out


def visible_runs(
    catalog: Catalog, subject: Subject, labels: Labels, semantic: str, table: pa.Table
) -> Runs:
    """The rows of ``table`` one session may see now (``boxes.secfilter.visible``, on the
    snapshot with every change committed so far in it, on any server), in ``runs_of``."""
    if table.num_rows == 0:
        return []
    snapshot = catalog.core.current()
    reader = decided_of(snapshot, catalog.core.clock(), subject, labels).reader
    (seen,) = visible(table, [reader], semantic, labels.leveled)
    shown = rows(table, labels.inputs, seen.rows, snapshot.levels)
    return runs_of(table, shown, seen, reader.roles, snapshot)


class Delivery:
    """Subscriptions are kept by the output's catalog key (its name, but for one named over an
    output its creator could not see: ``catalog.names``); each has a *route*, the runtime
    output it reads: the output itself, or a rewritten diagram's variant output for a reader
    whose policies rewrite it differently (``server.control.variants``). Batches arrive by
    route and leave under the output's public name, once per audience of the route
    (``server.realtime.audiences``), to its room."""

    def __init__(self, catalog: Catalog, transport: Transport) -> None:
        """``transport`` sends to a socket or a room and keeps sockets in rooms."""
        self.catalog = catalog
        self._transport = transport
        self._labels: dict[str, Labels] = {}
        self.schemas: dict[str, Schema] = {}
        self.semantics: dict[str, str] = {}
        self._subscribers: dict[str, dict[str, Subject]] = {}
        # (output, sid) -> the runtime output that subscription reads (its route)
        self._routes: dict[tuple[str, str], str] = {}
        self._public: dict[str, str] = {}  # a variant's output -> the output it stands for
        # route -> the subscriptions reading it live (not parked, not catching up), and
        # those that came (their subject) or went (None) since its audiences were decided
        self._live: dict[str, dict[str, Subject]] = {}
        self._changed: dict[str, dict[str, Subject | None]] = {}
        self._settling = Settling(self)  # the routes' audiences, decided
        self._replays = Replays(self)  # subscriptions catching up, and where each log stands
        # output -> who may read it beyond SUBSCRIBE, and through which route (a rewritten
        # diagram's, see server.control.variants): raises the refusal
        self._gates: dict[str, Gate] = {}
        # (output, sid) -> the policy (its roles, by name) a subscriber was last told of
        self._policies: dict[tuple[str, str], tuple[str, ...]] = {}
        # route -> the fingerprint of the rewrite its batches are computed under (a gated
        # output's: server.control.rewrites.key_of); routes whose batches another server
        # relays here (``adopt``), and who may read those of a rewritten one
        self._rewrites: dict[str, str] = {}
        self._adopted: set[str] = set()
        self.check_relayed: Callable[[Subject, str, str, Snapshot], None] = _relayed_refused
        # told of a variant's route a subscription left (server.control.variants)
        self.on_leave: Callable[[str], None] = lambda route: None
        self._lock = threading.Lock()

    def emit(self, event: str, data: dict, to: str) -> None:
        """Send an event about an output (to a socket or an audience's room) under its public
        name: subscriptions are kept by the output's key (``catalog.names``), which its
        subscribers are never shown."""
        self._transport.emit(event, {**data, "output": public_of(data["output"])}, to=to)

    def register(
        self,
        outputs: Mapping[str, Schema],
        labels: Labels,
        semantics: Mapping[str, str] | None = None,
        gate: Gate | None = None,
        public: Mapping[str, str] | None = None,
        rewrite: str | None = None,
    ) -> None:
        """A diagram (or a variant) was deployed: how to read its outputs' labels, their
        schemas, their semantics (strong where not given), who may read them beyond SUBSCRIBE
        (``gate`` routes or refuses a reader; None: everyone reads the output itself, and
        ``rewrite`` fingerprints the rewrite it runs under), and, for a variant, the public
        output each of its outputs stands for."""
        with self._lock:
            for output, schema in outputs.items():
                self._labels[output] = labels
                self.schemas[output] = schema
                self.semantics[output] = (semantics or {}).get(output, STRONG)
                self._adopted.discard(output)
                _keep(self._gates, output, gate)
                _keep(self._rewrites, output, rewrite)
                if public is not None:
                    self._public[output] = public[output]

    def unregister(self, outputs) -> None:
        """A variant stopped: forget its outputs."""
        with self._lock:
            for output in outputs:
                for table in (self._labels, self.schemas, self.semantics, self._public):
                    table.pop(output, None)
                self._replays.next.pop(output, None)
        self.settle(outputs)  # its audiences' rooms are left

    def adopt(
        self, route: str, labels: Labels, semantic: str, rewrite: str | None, public: str
    ) -> None:
        """A batch relayed from the runtime's holder (``server.realtime.relay``) for runtime
        output ``route``, a variant's if ``public`` (the output it stands for) differs: read
        its labels as the holder deployed them; computed under the rewrite ``rewrite`` (its
        fingerprint), it reaches only readers ``check_relayed`` lets read it."""
        with self._lock:
            self._labels[route] = labels
            self.semantics[route] = semantic
            self._adopted.add(route)
            _keep(self._rewrites, route, rewrite)
            _keep(self._public, route, public if public != route else None)

    def public_of(self, route: str) -> str:
        """The output a runtime output stands for: a variant's public one, or itself."""
        with self._lock:
            return self._public.get(route, route)

    def variant_readers(self) -> dict[str, tuple[str, str]]:
        """Per variant route read here, one subscription reading it: ``(output, sid)``."""
        with self._lock:
            return {r: key for key, r in self._routes.items() if r != key[0]}

    def rewrite_of(self, route: str) -> str | None:
        """The fingerprint of the rewrite ``route``'s batches are computed under, if any."""
        with self._lock:
            return self._rewrites.get(route)

    def semantic(self, route: str) -> str:
        with self._lock:
            return self.semantics.get(route, STRONG)

    def labels(self, output: str) -> Labels | None:
        """How a deployed output's label bits map to catalog sources (None before its deploy)."""
        with self._lock:
            return self._labels.get(output)

    def route(self, subject: Subject, output: str, start: bool = False) -> str:
        """The runtime output ``subject`` reads for ``output``: the output itself, or its
        variant (started if ``start``); the gate's refusal otherwise (REWRITE_DENIED, ...)."""
        gate = self._gates.get(output)
        return output if gate is None else gate(subject, output, start)

    def readers(self, route: str) -> int:
        """How many subscriptions read ``route`` now."""
        with self._lock:
            return sum(1 for r in self._routes.values() if r == route)

    def recheck(self, output: str) -> None:
        """Route every subscriber of ``output`` again (after a change of policies or
        attributes): one whose route changed moves to its new one (its variant started if
        need be; nothing reaches it meanwhile) and is told (``subscription_moved``); one
        refused now is told why (REWRITE_DENIED, REWRITE_VARIANTS_FULL, ...) and unsubscribed."""
        with self._lock:
            subscribers = [
                (sid, who, self._routes.get((output, sid), output))
                for sid, who in self._subscribers.get(output, {}).items()
            ]
        for sid, who, route in subscribers:
            try:
                if self.route(who, output) == route:
                    continue
            except SluiceError as refused:
                if refused.code != codes.REWRITE_VARIANT_NOT_RUNNING:
                    self._refuse(sid, output, refused)
                    continue
            self._move(sid, who, output, route)

    def park(self, output: str) -> None:
        """Deliver nothing to the subscriptions reading ``output`` itself until ``recheck``
        moves them: its diagram is about to run under another rewrite (``rewrites.swap``)."""
        with self._lock:
            for sid in self._subscribers.get(output, {}):
                if self._routes.get((output, sid), output) == output:
                    self._place(output, sid, PARKED)

    def _move(self, sid: str, subject: Subject, output: str, route: str) -> None:
        """Move a subscription from ``route`` to the one its policies give now."""
        with self._lock:
            if sid not in self._subscribers.get(output, {}):
                return  # it left meanwhile
            self._place(output, sid, PARKED)  # nothing of the old route while it moves
        try:
            again = self.route(subject, output, start=True)
        except SluiceError as refused:
            self._refuse(sid, output, refused)
            return
        with self._lock:
            kept = sid in self._subscribers.get(output, {})
            if kept:
                self._join(sid, subject, output, again)
        self._left([route])
        if kept:
            self.emit(MOVED_EVENT, {"output": output}, to=sid)

    def _refuse(self, sid: str, output: str, err: SluiceError) -> None:
        self.unsubscribe(sid, output)
        self.emit(ENDED_EVENT, {"output": output, **answer(err)}, to=sid)

    def end(self, output: str, err: SluiceError, route: str | None = None) -> None:
        """End the subscriptions of ``output`` (only those reading ``route``, if given),
        telling each why (its diagram or variant was stopped)."""
        with self._lock:
            subscribers = self._subscribers.get(output, {})
            sids = [
                sid
                for sid in subscribers
                if route is None or self._routes.get((output, sid), output) == route
            ]
            for sid in sids:
                subscribers.pop(sid, None)
                self._place(output, sid, None)
                self._forget_sent((output, sid))
        for sid in sids:
            self.emit(ENDED_EVENT, {"output": output, **answer(err)}, to=sid)

    def end_all(self, err: SluiceError) -> None:
        """End every subscription (the runtime stopped on this server)."""
        with self._lock:
            outputs = list(self._subscribers)
        for output in outputs:
            self.end(output, err)

    def _join(self, sid: str, subject: Subject, output: str, route: str) -> str | None:
        """Keep one subscription (under the lock); the route it replaced, if another."""
        self._subscribers.setdefault(output, {})[sid] = subject
        old = self._routes.get((output, sid))
        self._forget_sent((output, sid))
        self._place(output, sid, route)
        return old if old not in (None, route) else None

    def _place(self, output: str, sid: str, route: str | None) -> None:
        """(Under the lock.) Subscription ``(output, sid)`` reads ``route`` now (None: it
        ended): it leaves the audiences of the route it read, and joins those of ``route``
        if it reads it live (not parked, not catching up), as ``settle`` decides."""
        key = (output, sid)
        old = self._routes.pop(key, None)
        if old not in (None, PARKED):
            self._live.get(old, {}).pop(sid, None)
            self._changed.setdefault(old, {})[sid] = None
        if route is None:
            return
        self._routes[key] = route
        if route != PARKED and not self._replays.catching_up(key):
            subject = self._subscribers[output][sid]
            self._live.setdefault(route, {})[sid] = subject
            self._changed.setdefault(route, {})[sid] = subject

    def _verify(self, sid: str, subject: Subject, output: str, route: str) -> None:
        """Route a joined subscription again with the policies of now: a change whose re-check
        ran between its routing and its join would otherwise leave it on a rewrite that is
        no longer its own (a change after this is the re-check's)."""
        if output not in self._gates:
            return
        try:
            again: str | None = self.route(subject, output)
            err: SluiceError | None = None
        except SluiceError as refused:
            again, err = None, refused
        if again == route:
            return
        self.unsubscribe(sid, output)
        if err is None or err.code == codes.REWRITE_VARIANT_NOT_RUNNING:
            err = Conflict(code=codes.REWRITE_CHANGED, output=output)
        raise err

    def subscribe(self, sid: str, subject: Subject, output: str, route: str | None = None) -> None:
        """Keep ``sid``'s subscription of ``output``, reading ``route`` (by default the one
        ``route()`` gives; a standby routes a variant's reader itself: ``realtime.standby``)."""
        route = route or self.route(subject, output, start=True)
        with self._lock:
            old = self._join(sid, subject, output, route)
        self._left([old])
        self._verify(sid, subject, output, route)
        self.settle([route])  # in its audience's room from now on

    def subscribe_from(self, sid: str, subject: Subject, output: str, start: int, read) -> int:
        """``catch_up`` from this server's result log (``read(route, start, rows)``: the
        runtime's), its rows filtered with the permissions of the moment."""
        return self._replays.subscribe_from(sid, subject, output, start, read)

    def catch_up(
        self, sid: str, subject: Subject, output: str, start: int, page, route: str | None = None
    ) -> int:
        """Subscribe, first sending what the output's result log (its route's) holds from
        ``start`` on (``page(route, at)``: the runs of rows the subscriber may see from ``at``
        on, as ``_runs`` gives them, and where the page ends: ``{"next", "log"}``, the position
        to read on and the log's identity), then live batches, with no gap
        and no batch twice: live batches that arrive meanwhile are held back and sent after,
        less those the replay already covered, and so are those that arrive later (a batch
        is logged before it is delivered). Returns where the replay ended; an error from
        the first read (``RESULTS_EXPIRED``) subscribes nothing (``server.realtime.replay``)."""
        return self._replays.catch_up(sid, subject, output, start, page, route)

    def _send(self, sid: str, output: str, runs: list, position: Mapping[str, Any]):
        """Replayed or held rows, each run after its policy (``policy`` event) if it has one,
        with their place in the result log (``position_of``)."""
        for granted, tuples in runs:
            if granted is not None:
                self._policy(sid, output, granted)
            if tuples:
                self.emit(TUPLES_EVENT, {"output": output, "tuples": tuples, **position}, to=sid)

    def unsubscribe(self, sid: str, output: str) -> bool:
        with self._lock:
            self._forget_sent((output, sid))
            route = self._routes.get((output, sid))
            self._place(output, sid, None)
            found = self._subscribers.get(output, {}).pop(sid, None) is not None
        self._left([route])
        return found

    def forget(self, sid: str) -> None:
        """A socket went away: drop all its subscriptions."""
        with self._lock:
            for subscribers in self._subscribers.values():
                subscribers.pop(sid, None)
            for key in [k for k in (*self._policies, *self._replays.replayed) if k[1] == sid]:
                self._forget_sent(key)
            keys = [k for k in self._routes if k[1] == sid]
            routes = [self._routes[k] for k in keys]
            for output, _ in keys:
                self._place(output, sid, None)
        self._left(routes)

    def _forget_sent(self, key: tuple[str, str]) -> None:
        """What a subscription was last told (under the lock): its policy, its replay's end."""
        self._policies.pop(key, None)
        self._replays.replayed.pop(key, None)

    def _left(self, routes) -> None:
        """Tell the variants which of theirs a subscription left (outside the lock)."""
        for route in routes:
            if route is not None and route in self._public:
                self.on_leave(route)

    def visible_to(
        self, subject: Subject, labels: Labels, semantic: str, table: pa.Table
    ) -> list[dict]:
        """What one session may see now of ``table``, rows labelled ``labels`` of no route
        here (a preview's)."""
        runs = visible_runs(self.catalog, subject, labels, semantic, table)
        return [row for _, run in runs for row in run]

    def visible_rows(self, subject: Subject, route: str, table: pa.Table) -> list[dict]:
        """What one session may see of ``table`` now (read from ``route``, which
        ``route()`` gave it)."""
        return [row for _, run in self._runs(subject, route, table) for row in run]

    def visible_policies(
        self, subject: Subject, route: str, table: pa.Table
    ) -> tuple[list[dict], list[dict] | None]:
        """``visible_rows``, and on a governed output their policies in runs, in order:
        ``{"roles": the session's active roles the run's policy lets read it, "tuples": how
        many rows it governs}`` (what the ``policy`` event says; None for an ungoverned one)."""
        runs = self._runs(subject, route, table)
        rows = [row for _, run in runs for row in run]
        if DENIED_COLUMN not in table.column_names:
            return rows, None
        return rows, [{"roles": list(g or ()), "tuples": len(run)} for g, run in runs]

    def _runs(self, subject: Subject, route: str, table: pa.Table) -> list:
        labels = self._labels.get(route)
        if labels is None:
            return []
        semantic = self.semantics.get(route, STRONG)
        return visible_runs(self.catalog, subject, labels, semantic, table)

    def settle(self, routes: Iterable[str] | None = None) -> None:
        """Decide the audiences of ``routes`` (all with subscriptions, by default: after a
        catalog change) on the catalog as it is now (``server.realtime.settling``)."""
        self._settling.settle(routes)

    def audiences(self, route: str) -> dict[str, int]:
        """How many audiences read ``route``, and sockets in them (for its status)."""
        return self._settling.audiences(route)

    def on_batch(self, route: str, table: pa.Table) -> None:
        """Filter one result batch of runtime output ``route`` once per audience reading it
        and send each its part, to its room, under the public output's name. Rows the output
        produced that never got here (the tap's queue overflowed) are announced first, as
        positions a subscriber can read back. Subscriptions catching up are handed the batch
        (``catch_up``); one whose replay ended joins its audience at the first batch the
        replay did not cover."""
        position = position_of(table)
        handed = time.time()
        with self._lock:
            output = self._public.get(route, route)
            missed = self._replays.arrived(route, output, table, position)
            read = route in self._changed or bool(self._live.get(route))
            crowd = self._settling.crowd(route) if read else self._settling.crowds.get(route)
        if crowd is None or table.num_rows == 0:
            return
        # One snapshot decides the whole batch, with every change committed so far (on any
        # server) in it: SUBSCRIBE, rights, clearances, roles and the policy event's names.
        snapshot = self.catalog.core.current()
        with crowd.lock:
            labels = self._settling.settle_route(route, crowd, snapshot)
            audiences = list(crowd.audiences.values())
            if labels is None or not audiences:
                return
            for audience in audiences:
                if missed is not None:
                    self.emit(MISSED_EVENT, {"output": output, **missed}, to=audience.room)
            semantic = self.semantic(route)
            readers = [audience.decided.reader for audience in audiences]
            seen = visible(table, readers, semantic, labels.leveled)
            if not any(len(s.rows) for s in seen):
                return
            decoded = rows(table, labels.inputs, range(table.num_rows), snapshot.levels)  # once
            if stages.ON and position:
                stages.mark("handoff", output, position["next"], handed)
                stages.mark("decided", output, position["next"])
            for audience, mine in zip(audiences, seen, strict=True):
                shown = [decoded[i] for i in mine.rows]
                roles = audience.decided.reader.roles
                runs = runs_of(table, shown, mine, roles, snapshot)
                self._send_room(output, audience, runs, position)

    def _send_room(self, output: str, audience: Audience, runs: Runs, position: dict) -> None:
        """An audience's rows of a batch, to its room, each run after its policy."""
        for granted, tuples in runs:
            if granted is not None:
                self._tell_policy(output, audience, granted)
            if tuples:
                data = {"output": output, "tuples": tuples, **position}
                self.emit(TUPLES_EVENT, data, to=audience.room)

    def _tell_policy(self, output: str, audience: Audience, roles: tuple[str, ...]) -> None:
        """The ``policy`` event before the rows it governs: to the room if it changed, else to
        the members who joined since it was sent."""
        data = {"output": output, "roles": list(roles)}
        if audience.policy != roles:
            audience.policy = roles
            audience.fresh.clear()
            self.emit(POLICY_EVENT, data, to=audience.room)
            return
        for sid in audience.fresh:
            self.emit(POLICY_EVENT, data, to=sid)
        audience.fresh.clear()

    def _policy(self, sid: str, output: str, roles: tuple[str, ...]) -> None:
        """Tell a subscriber the policy of the rows that follow (its active ``roles`` the
        policy lets read them), if it is not the last one it was told of on this output."""
        with self._lock:
            if self._policies.get((output, sid)) == roles:
                return
            self._policies[(output, sid)] = roles
        self.emit(POLICY_EVENT, {"output": output, "roles": list(roles)}, to=sid)


def _keep(table: dict, key: str, value) -> None:
    """``table[key] = value``, or no entry for None."""
    if value is None:
        table.pop(key, None)
    else:
        table[key] = value


def _relayed_refused(subject: Subject, output: str, rewrite: str, snapshot: Snapshot) -> None:
    """Where nothing says who may read a relayed batch of a rewritten output: nobody."""
    raise Conflict(code=codes.REWRITE_CHANGED, output=output)
