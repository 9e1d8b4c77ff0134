"""Catching up: a subscriber reads an output's result log from a position, then live batches.

``Delivery.catch_up`` replays what the log holds from a position on, filtered with the
permissions of the moment, while live batches that arrive meanwhile are held back; it then
sends those, less what the replay covered, and the subscription joins its audience at the
first batch the replay did not cover: no gap, and no batch twice. Rows the output produced
that never reached delivery (a tap's queue overflowed) are announced as positions a
subscriber can read back (``missed``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from catalog import Subject
from server.runtime.outputs import BATCH_KEY, LOG_KEY, NEXT_KEY

if TYPE_CHECKING:
    from server.realtime.delivery import Delivery

REPLAY_PAGE = 1_000  # rows read from a result log at a time when a subscriber catches up


def position_of(table: pa.Table) -> dict[str, Any]:
    """Where a live batch sits in its output's result log: its batch id, the position to read
    from (``GET /outputs/NAME/results?from=``) for what follows it, and the log's identity
    (``&log=``: a position of a log started afresh since is refused, not read in the new one)."""
    metadata = table.schema.metadata or {}
    if BATCH_KEY not in metadata:
        return {}
    return {
        "batch": int(metadata[BATCH_KEY]),
        "next": int(metadata[NEXT_KEY]),
        "log": metadata[LOG_KEY].decode(),
    }


class Replays:
    """The subscriptions of ``delivery`` catching up, and where each route's log stands; kept
    under the delivery's lock."""

    def __init__(self, delivery: Delivery) -> None:
        self._delivery = delivery
        # (output, sid) -> live batches held back while that subscriber catches up
        self.held: dict[tuple[str, str], list[pa.Table]] = {}
        # (output, sid) -> where that subscriber's replay ended: a batch logged before the
        # replay's last read may still reach delivery after it, and is not sent again
        self.replayed: dict[tuple[str, str], int] = {}
        self.next: dict[str, int] = {}  # route -> position after the last batch handed here

    def catching_up(self, key: tuple[str, str]) -> bool:
        """(Under the lock.) Whether subscription ``key`` is not live yet."""
        return key in self.held or key in self.replayed

    def subscribe_from(self, sid: str, subject: Subject, output: str, start: int, read) -> int:
        """See ``Delivery.subscribe_from``."""
        d = self._delivery

        def page(route: str, at: int) -> tuple[list, dict[str, Any]]:
            got = read(route, at, REPLAY_PAGE)
            table = pa.concat_tables(got.tables) if got.tables else None
            runs = [] if table is None else d._runs(subject, route, table)
            return runs, {"next": got.next, "log": got.log}

        return self.catch_up(sid, subject, output, start, page)

    def catch_up(
        self, sid: str, subject: Subject, output: str, start: int, page, route: str | None = None
    ) -> int:
        """See ``Delivery.catch_up``."""
        d = self._delivery
        key = (output, sid)
        route = route or d.route(subject, output, start=True)
        with d._lock:
            self.held[key] = []
            old = d._join(sid, subject, output, route)
        d._left([old])
        try:
            d._verify(sid, subject, output, route)
            end = start
            while True:
                runs, position = page(route, end)
                d._send(sid, output, runs, position)
                next_ = position["next"]
                if next_ == end:
                    break
                end = next_
        except BaseException:
            with d._lock:
                self.held.pop(key, None)
                d._subscribers.get(output, {}).pop(sid, None)
                d._place(output, sid, None)
            d._left([route])
            raise
        sent = end
        while True:  # what arrived meanwhile, in order, until nothing more did
            with d._lock:
                held = self.held.pop(key, [])
                if not held:
                    self.replayed[key] = sent
                    break
                self.held[key] = []
            for table in held:
                position = position_of(table)
                if position.get("next", sent + 1) > sent:
                    d._send(sid, output, d._runs(subject, route, table), position)
                    sent = position.get("next", sent)
        return end

    def arrived(
        self, route: str, output: str, table: pa.Table, position: Mapping[str, int]
    ) -> dict | None:
        """(Under the lock.) A live batch of ``route`` (its public ``output``) reached delivery:
        held back for the subscriptions catching up; those whose replay it follows read live
        from it on. The positions it shows were missed since the last batch, if any."""
        d = self._delivery
        for key, held in self.held.items():
            if key[0] == output and d._routes.get(key) == route:
                held.append(table)
        for key in [k for k in self.replayed if d._routes.get(k) == route]:
            if not self._replayed_already(key, route, position, table.num_rows):
                d._place(output, key[1], route)  # live from this batch on
        return self._gap(route, position, table.num_rows)

    def _gap(self, output: str, position: Mapping[str, int], count: int) -> dict | None:
        """The positions between the last batch handed here and this one, if any."""
        if "next" not in position:
            return None
        start, last = position["next"] - count, self.next.get(output)
        self.next[output] = position["next"]
        if last is None or start <= last:  # the first batch, or a new result log (redeploy)
            return None
        return {"from": last, "to": start}

    def _replayed_already(
        self, key: tuple[str, str], route: str, position: Mapping[str, int], count: int
    ) -> bool:
        """Whether a live batch was in its subscriber's replay (under the lock): it ends
        where the replay did, or before, and follows the last batch handed here (the first
        batch of a new result log, a redeploy's, starts before that). The first that was not
        ends the question, as an output's batches arrive in order."""
        end, last = self.replayed.get(key), self.next.get(route)
        if end is None:
            return False
        at = position.get("next", end + 1)
        if at <= end and (last is None or at - count >= last):
            return True
        del self.replayed[key]
        return False
