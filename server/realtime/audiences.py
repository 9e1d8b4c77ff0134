"""Audiences: the subscribers of one runtime output who are decided alike.

Two subscriptions of a route receive the same rows of every batch iff their readers are equal
(``boxes.secfilter.Reader``: READ_TUPLE and READ_AGGREGATE rights over the output's labels,
clearance, active roles' sp bits); the route fixes the rest (semantic, rewrite). They form one
*audience*, with a socket.io room of its own: delivery filters and encodes a batch once per
audience and sends it once, to the room, so a batch costs distinct audiences and rows, not
subscribers (``server.realtime.delivery``).

A ``Crowd`` keeps one route's audiences as one catalog snapshot decided them (its *stamp*,
with the output's labels and relayed rewrite). Until the stamp changes, or a member's
session expires, only the subscriptions that came or went are decided; after, every member
is decided again before the next batch goes out, and one whose reader changed leaves its
room for its new one: no socket stays in a room wider than its rights.
"""

from __future__ import annotations

import itertools
import logging
import math
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from boxes.secfilter import Reader
from catalog import Catalog
from catalog.core import Kinds

log = logging.getLogger(__name__)
Key = tuple[bytes, int, int]
# Catalog changes (by the events they log, ``catalog.core.Kinds``) that cannot alter who reads
# what: a session opened (no socket subscribes with it yet), an account, a role or an object
# made (nobody plays, holds or subscribes to it yet).
UNREAD = frozenset(
    {"login", "user_add", "role_add", "schema_add", "stream_add", "diagram_add", "box_type_add"}
)


def key_of(reader: Reader) -> Key:
    """Equal for readers every batch decides alike."""
    return (reader.rights.key(), reader.clearance, reader.roles)


@dataclass(frozen=True)
class Decided:
    """One subscriber as a snapshot decides it: its reader, and by name the output's inputs
    it may read tuples of (``sources``) and those it may read only aggregated."""

    reader: Reader
    sources: tuple[str, ...]
    aggregated: tuple[str, ...]


@dataclass
class Audience:
    """Subscriptions of one route decided alike, and what their room was last told."""

    room: str
    decided: Decided
    sids: set[str] = field(default_factory=set)
    policy: tuple[str, ...] | None = None  # the policy event the room was last sent
    fresh: set[str] = field(default_factory=set)  # members who joined after it was sent


@dataclass(frozen=True)
class Moved:
    """A subscription that came into an audience (``room``), from ``left`` if it was in
    another, ``changed`` if its readable sources differ from those it had there."""

    sid: str
    room: str
    left: str | None
    changed: bool


class Crowd:
    """The audiences of one route. Its lock is held while a batch of the route is decided and
    sent, so no re-decision moves a member between the decision and the send."""

    def __init__(self, room: Callable[[], str]) -> None:
        self._room = room
        self.lock = threading.Lock()
        self.stamp: tuple | None = None
        self.until = math.inf  # the first expiry of a member's session
        self.audiences: dict[Key, Audience] = {}
        self.of: dict[str, Key] = {}

    def current(self, stamp: tuple, now: float) -> bool:
        """Whether the members' decisions still hold: same snapshot (the very object), labels
        and rewrite, and no member's session has expired since."""
        return (
            self.stamp is not None
            and self.stamp[0] is stamp[0]
            and self.stamp[1:] == stamp[1:]
            and now < self.until
        )

    def place(self, sid: str, decided: Decided, told: tuple[str, ...] | None) -> Moved | None:
        """Put ``sid`` in the audience ``decided`` gives (None if it is there already);
        ``told``: the policy it was last sent, if it joins from outside any audience."""
        key = key_of(decided.reader)
        old = self.of.get(sid)
        if old == key:
            return None
        before = None
        if old is not None:
            before = self.audiences[old]
            told = before.policy if sid not in before.fresh else None
            self._leave(sid, old)
        audience = self.audiences.get(key)
        if audience is None:
            audience = self.audiences[key] = Audience(self._room(), decided)
        audience.sids.add(sid)
        if audience.policy is not None and told != audience.policy:
            audience.fresh.add(sid)
        self.of[sid] = key
        changed = before is not None and (
            (before.decided.sources, before.decided.aggregated)
            != (decided.sources, decided.aggregated)
        )
        return Moved(sid, audience.room, before.room if before else None, changed)

    def drop(self, sid: str) -> str | None:
        """Take ``sid`` out of its audience; the room it leaves, if any."""
        key = self.of.get(sid)
        if key is None:
            return None
        room = self.audiences[key].room
        self._leave(sid, key)
        return room

    def _leave(self, sid: str, key: Key) -> None:
        audience = self.audiences[key]
        audience.sids.discard(sid)
        audience.fresh.discard(sid)
        del self.of[sid]
        if not audience.sids:
            del self.audiences[key]

    def counts(self) -> dict[str, int]:
        """How many audiences, and sockets in them."""
        return {"audiences": len(self.audiences), "sockets": len(self.of)}


def room_names() -> Callable[[], str]:
    """New room names, unique to this process's delivery (a room is never shared with another
    server's sockets, whatever message queue socket.io may use)."""
    prefix = f"audience:{secrets.token_hex(6)}:"
    numbers = itertools.count()
    return lambda: f"{prefix}{next(numbers)}"


def rereads(kinds: Kinds) -> bool:
    """Whether a catalog change may alter who reads what, so the audiences are decided again:
    all but those ``UNREAD`` names, including one that logged nothing and another process's,
    whose kind is unknown (deny by default)."""
    return not kinds or not kinds <= UNREAD


class Rechecks:
    """Runs ``settle()`` (``Delivery.settle``) in its own thread after each catalog change that
    may alter who reads what (``rereads``), so a subscriber whose rights changed leaves its room
    and is told at once, not at the route's next batch; a login decides nothing again. Catalog
    listeners only signal, and changes that come while it runs fold into one more run."""

    def __init__(self, catalog: Catalog, settle: Callable[[], None]) -> None:
        """Listens to ``catalog``'s changes from ``start`` on."""
        self._catalog = catalog
        self.settle = settle
        self._changed = threading.Event()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="audience-rechecks", daemon=True)

    def signal(self, kinds: Kinds) -> None:
        if rereads(kinds):
            self._changed.set()

    def _run(self) -> None:
        while True:
            self._changed.wait()
            if self._stopped.is_set():
                return
            self._changed.clear()
            try:
                self.settle()
            except Exception:  # the next change, or the route's next batch, decides again
                log.exception("audiences were not decided again after a catalog change")

    def start(self) -> None:
        self._catalog.core.on_change_of(self.signal)
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        self._changed.set()
        self._thread.join()
