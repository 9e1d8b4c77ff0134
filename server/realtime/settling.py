"""Settling: a delivery's audiences decided on the catalog as it is now.

``Delivery`` keeps the subscriptions; this decides who of them forms which audience
(``server.realtime.audiences``) of each route: after a catalog change (``Rechecks``), when a
subscription comes or goes, and before each batch goes out. One catalog snapshot decides a
route's members at a time (``decided_of``); one whose reader changed leaves its room for its
new one, one refused now is ended and told why, one whose readable sources changed is told
which it reads now.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from boxes.errors import SluiceError
from boxes.secfilter import Reader
from catalog import Action, ObjectType, Subject
from catalog.authorizer import playing
from catalog.sessions import source_rights
from catalog.snapshot import Snapshot
from server.realtime.audiences import Crowd, Decided, room_names

if TYPE_CHECKING:
    from server.realtime.delivery import Delivery, Labels

SOURCES_EVENT = "sources_changed"
PARKED = ""  # the route of a subscription being moved: no runtime output has this name


def role_mask(snapshot, roles) -> int:
    """The catalog bits of a session's active roles, a mask of any width (a role without a
    bit has none: no sp grants it anything; ``boxes/punctuations/words.py``)."""
    mask = 0
    for role in roles:
        bit = snapshot.role_bits.get(role)
        if bit is not None:
            mask |= 1 << bit
    return mask


def decided_of(snapshot: Snapshot, now: float, subject: Subject, labels: Labels) -> Decided:
    """A session as a reader of an output's labels (``boxes.secfilter.visible``): its
    READ_TUPLE and READ_AGGREGATE rights, its clearance and its active roles' bits, every one
    read from ``snapshot`` at time ``now``: one catalog state decides a batch, so no change
    committed meanwhile can pair a right of before it with a clearance or a role of after.
    With the inputs it may read, by name."""
    roles = playing(subject, snapshot)
    tuples, aggregates = source_rights(subject, snapshot, now)
    rights = labels.rights(tuples, aggregates)
    reader = Reader(rights, snapshot.levels.clearance(roles), role_mask(snapshot, roles))
    sources = labels.names(tuples)
    return Decided(reader, sources, tuple(n for n in labels.names(aggregates) if n not in sources))


class Settling:
    """The audiences of ``delivery``'s routes, kept under its lock (each route's ``Crowd``
    also under its own, while a batch of it is decided and sent)."""

    def __init__(self, delivery: Delivery) -> None:
        self._delivery = delivery
        self.crowds: dict[str, Crowd] = {}  # route -> its audiences
        self._room = room_names()

    def crowd(self, route: str) -> Crowd:
        """(Under the delivery's lock.) The audiences of ``route``."""
        crowd = self.crowds.get(route)
        if crowd is None:
            crowd = self.crowds[route] = Crowd(self._room)
        return crowd

    def settle(self, routes: Iterable[str] | None = None) -> None:
        """See ``Delivery.settle``."""
        d = self._delivery
        snapshot = d.catalog.core.current()
        with d._lock:
            wanted = set(self.crowds) | set(d._changed) if routes is None else set(routes)
            crowds = [(route, self.crowd(route)) for route in wanted if route != PARKED]
        for route, crowd in crowds:
            with crowd.lock:
                deployed = self.settle_route(route, crowd, snapshot) is not None
            with d._lock:
                gone = not deployed and not crowd.of and not d._live.get(route)
                if gone and self.crowds.get(route) is crowd:
                    del self.crowds[route]  # a route gone (a variant stopped): forgotten

    def settle_route(self, route: str, crowd: Crowd, snapshot: Snapshot) -> Labels | None:
        """(Under ``crowd.lock``.) Bring ``route``'s audiences to ``snapshot``: every member
        decided again if the crowd's decisions no longer hold (``Crowd.current``), else only
        the subscriptions that came or went; each in the room of its decision (it leaves the
        old one first), one refused ended and told why, one whose readable sources changed
        told which it reads now. The labels it decided with (None: the route is not
        deployed here, and its audiences are emptied)."""
        d = self._delivery
        now = d.catalog.core.clock()
        with d._lock:
            output = d._public.get(route, route)
            labels = d._labels.get(route)
            relayed = d._rewrites.get(route) if route in d._adopted else None
            stamp = (snapshot, labels, relayed)
            changed = d._changed.pop(route, {})
            joined = {sid for sid, subject in changed.items() if subject is not None}
            whole = not crowd.current(stamp, now)
            if whole:
                changed = {**dict.fromkeys(crowd.of), **d._live.get(route, {})}
            told = {sid: d._policies.get((output, sid)) for sid in changed}
        answers: dict[Subject, Decided | SluiceError] = {}
        until = math.inf
        if labels is not None:
            present = (s for s in changed.values() if s is not None)
            answers, until = self._decide(output, labels, relayed, snapshot, now, present)
        refused, moved = [], []
        for sid, subject in changed.items():
            answer = answers.get(subject) if subject is not None else None
            if sid in joined:  # a new subscription: its audience's room tells it anew
                room = crowd.drop(sid)
                if room is not None:
                    d._transport.leave_room(sid, room)
            if isinstance(answer, Decided):
                move = crowd.place(sid, answer, told[sid])
                if move is not None:
                    if move.left is not None:
                        d._transport.leave_room(sid, move.left)
                    d._transport.enter_room(sid, move.room)
                    moved.append((move, answer))
                continue
            room = crowd.drop(sid)
            if room is not None:
                d._transport.leave_room(sid, room)
            if isinstance(answer, SluiceError):
                refused.append((sid, answer))
        if whole:
            crowd.stamp, crowd.until = (stamp if labels is not None else None), until
        else:
            crowd.until = min(crowd.until, until)
        for sid, err in refused:
            d._refuse(sid, output, err)
        for move, decided in moved:
            if move.changed:
                sources = {"sources": list(decided.sources), "aggregated": list(decided.aggregated)}
                d.emit(SOURCES_EVENT, {"output": output, **sources}, to=move.sid)
        return labels

    def _decide(
        self,
        output: str,
        labels: Labels,
        relayed: str | None,
        snapshot: Snapshot,
        now: float,
        subjects: Iterable[Subject],
    ) -> tuple[dict[Subject, Decided | SluiceError], float]:
        """Each distinct subject as ``snapshot`` decides it at ``now``: SUBSCRIBE still held
        and, for batches relayed under the rewrite ``relayed``, that rewrite its own
        (``check_relayed``), then its reader; else why not. With the first expiry among
        their sessions, when the answers stop holding."""
        d = self._delivery
        answers: dict[Subject, Decided | SluiceError] = {}
        until = math.inf
        for subject in set(subjects):
            try:
                d.catalog.objects.require_key(
                    subject, Action.SUBSCRIBE, ObjectType.OUTPUT, output, snapshot
                )
                if relayed is not None:
                    d.check_relayed(subject, output, relayed, snapshot)
            except SluiceError as err:
                answers[subject] = err
                continue
            answers[subject] = decided_of(snapshot, now, subject, labels)
            until = min(until, snapshot.sessions[subject.session_id].expires_at)
        return answers, until

    def audiences(self, route: str) -> dict[str, int]:
        """See ``Delivery.audiences``."""
        with self._delivery._lock:
            crowd = self.crowds.get(route)
        return crowd.counts() if crowd is not None else {"audiences": 0, "sockets": 0}
