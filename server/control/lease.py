"""Of the servers on one catalog, exactly one runs the Spark runtime: the holder of the
catalog's ``runtime`` lease (``catalog.leases``); docs/deploy.md "The runtime lease".

A server configured with the runtime takes the lease when it starts, or waits as a standby:
it serves REST and logins, and answers what needs the runtime (ingestion, deploys,
subscriptions) with ``RUNTIME_UNAVAILABLE``. The holder renews three times per lease span; a
standby tries as often, and once the holder has stopped renewing (it died) it takes the lease
and starts the runtime on the shared runtime directory: the ingestion logs with every tuple the
old holder acknowledged, and every running diagram resumed from its checkpoints.

The holder is the server's host and data directory: the directory's lock lets one process
hold it at a time, so a server restarted on it takes its own lease back at once rather than
waiting for it to run out.

Fencing: a holder that finds the lease taken stops its runtime. One that cannot reach the
catalog keeps the runtime only until its own lease would have ended, counted on its own clock
from before it asked (so earlier than by the database's), and refuses to acknowledge tuples
after that (``valid``), so two servers never append to one log.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from catalog import Catalog

LEASE = "runtime"
SAFE = 0.8  # of the lease's span: how long a holder trusts a renewal on its own clock
log = logging.getLogger(__name__)


def holder_name(data_dir) -> str:
    return f"{socket.gethostname()}:{data_dir}"


class RuntimeLease:
    """Keeps taking the lease; calls ``gained`` when this server comes to hold it and
    ``lost`` when it no longer does, one at a time and in order, off the renewing thread (a
    runtime takes longer to start than a lease may go unrenewed)."""

    def __init__(
        self,
        catalog: Catalog,
        holder: str,
        seconds: float,
        gained: Callable[[], None],
        lost: Callable[[], None],
        clock: Callable[[], float] = time.monotonic,
        address: str = "",
    ) -> None:
        """``address``: where the other servers reach this one (they forward ingestion to
        the holder)."""
        self.catalog, self.holder, self.seconds, self.address = catalog, holder, seconds, address
        self._gained, self._lost, self._clock = gained, lost, clock
        self._valid_until = 0.0  # on ``clock``
        self._holding = False  # what the last transition handed over said
        self._switch = ThreadPoolExecutor(1, thread_name_prefix="runtime-lease-switch")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._renew, name="runtime-lease", daemon=True)

    def begin(self) -> bool:
        """Try once, start renewing, and if this server holds the lease, start the runtime
        before returning (its error, if any, is raised here). Whether it holds it."""
        held = self._take()
        self._thread.start()
        if held:
            self._holding = True
            self._switch.submit(self._gained).result()
        return held

    def valid(self) -> bool:
        """Whether this server may act as the runtime's holder now."""
        return self._holding and self._clock() < self._valid_until

    def _take(self) -> bool:
        asked = self._clock()
        try:
            lease = self.catalog.leases.take(LEASE, self.holder, self.seconds, self.address)
        except Exception:
            log.exception("could not renew the runtime lease; holding it until it runs out")
            return self._clock() < self._valid_until
        if lease.held:
            self._valid_until = asked + self.seconds * SAFE
        else:
            self._valid_until = 0.0
            if self._holding:
                log.error("the runtime lease went to %s: stopping the runtime here", lease.holder)
        return lease.held

    def _renew(self) -> None:
        while not self._stop.wait(self.seconds / 3):
            held = self._take()
            if held != self._holding:
                self._holding = held
                if held:
                    log.warning("took the runtime lease over: starting the runtime")
                self._switch.submit(_logged, self._gained if held else self._lost)

    def stop(self) -> None:
        """Stop renewing, after any start or stop of the runtime under way (before the
        runtime closes)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self._switch.shutdown(wait=True)

    def release(self) -> None:
        """Give the lease up (after the runtime closed), so a standby need not wait for it to
        run out."""
        if self._holding:
            self._holding = False
            try:
                self.catalog.leases.release(LEASE, self.holder)
            except Exception:
                log.exception("could not give the runtime lease up; it runs out by itself")


def _logged(switch: Callable[[], None]) -> None:
    try:
        switch()
    except Exception:
        log.exception("starting or stopping the runtime failed")
