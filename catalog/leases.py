"""Leases: of several servers on one catalog, which one does a thing alone, and until when.

A lease is taken or renewed in one write transaction (serialised across servers: SQLite's
``BEGIN IMMEDIATE``, PostgreSQL's advisory lock), by the database's clock, so servers whose
clocks differ agree on when it ends. Its holder renews it well before it ends; a holder that
died stops renewing, and once the lease has ended another may take it. A holder taking its own
lease again (a server restarted on the same data directory) gets it at once.

Leases are not catalog objects: no session decides on them, no audit entry is written per
renewal (a server renews every few seconds), and taking one does not announce a catalog
change.

>>> a, b = cat.leases.take("runtime", "a", 30), cat.leases.take("runtime", "b", 30)
>>> (a.held, b.held, b.holder)
(True, False, 'a')
>>> cat.leases.release("runtime", "a"); cat.leases.take("runtime", "b", 30).held
True
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog import repository
from catalog.core import Core


@dataclass(frozen=True)
class Lease:
    """A lease as one server sees it after trying to take it."""

    name: str
    holder: str  # who holds it now: the caller if ``held``
    address: str  # where the other servers reach the holder
    seconds_left: float  # until it ends, unless renewed
    held: bool  # whether the caller holds it


class Leases:
    def __init__(self, core: Core) -> None:
        self.core = core

    def take(self, name: str, holder: str, seconds: float, address: str = "") -> Lease:
        """Hold ``name`` for ``seconds`` from now: renewed if ``holder`` holds it, taken if
        nobody does or its holder's time is over; otherwise who holds it and for how long."""
        with self.core.store.transaction() as conn:
            now, row = repository.lease(conn, name)
            if row is not None and row[0] != holder and row[2] > now:
                return Lease(name, row[0], row[1], row[2] - now, held=False)
            repository.put_lease(conn, name, holder, address, now + seconds)
        return Lease(name, holder, address, seconds, held=True)

    def release(self, name: str, holder: str) -> None:
        """End ``holder``'s lease at once (a server stopping cleanly), so another need not wait
        for it to run out; nothing if another holds it."""
        with self.core.store.transaction() as conn:
            repository.delete_lease(conn, name, holder)

    def holder(self, name: str) -> Lease | None:
        """Who holds ``name`` now, if anybody (for the system's status)."""
        with self.core.store.reader() as conn:
            now, row = repository.lease(conn, name)
        if row is None or row[2] <= now:
            return None
        return Lease(name, row[0], row[1], row[2] - now, held=False)
