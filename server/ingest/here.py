"""Whether the runtime is here: the one answer, for every caller.

``svc.runtime`` is this process's runtime, or None; the lease thread (``server.control.lease``)
may set it to None at any moment, and a server whose lease has run out must not act as the
runtime's holder although its runtime has not stopped yet. So no caller reads the field: each
takes one :class:`Here`, which reads the field and the lease once, and uses the runtime it
hands out, never the field again (a check and a later use could see two different runtimes).

A caller picks what it needs of the one snapshot:

* ``needed()``: the runtime, or ``RUNTIME_UNAVAILABLE``; for what only the holder may do
  (append, deploy, read a result log).
* ``unless_standby()``: the runtime, None on a server configured without one (or while it
  starts); a standby refuses. For a catalog change the holder must hear of.
* ``runtime``: whatever runtime this process runs, lease or not; for what only looks at it or
  tidies up after a change (a runtime that lost its lease stops anyway).
* ``elsewhere``: the runtime, if any server runs it, runs on another, which a request that
  needs it can be passed on to (``server.http.forward``, ``server.realtime.standby``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from boxes import codes
from boxes.errors import Unavailable

if TYPE_CHECKING:  # types only: the runtime loads Spark
    from server.runtime import Runtime


@dataclass(frozen=True)
class Here:
    runtime: Runtime | None  # this process's, lease or not
    standby: bool  # may run the runtime but does not hold its lease now
    configured: bool  # this server runs the runtime when it holds the lease

    @property
    def elsewhere(self) -> bool:
        """Whether the runtime, if any server runs it, runs on another: this server waits to
        take it over (or was cut off from the catalog past its lease's end), or is configured
        without one."""
        return self.standby or (not self.configured and self.runtime is None)

    def needed(self) -> Runtime:
        """The runtime, if this server runs it and holds its lease."""
        if self.runtime is None or self.standby:
            raise Unavailable(code=codes.RUNTIME_UNAVAILABLE)
        return self.runtime

    def unless_standby(self) -> Runtime | None:
        """The runtime a catalog change must be told of, None on a server without one. A
        standby refuses the change before making it: the lease's holder runs the runtime and
        would not hear of it (a stream without a log, a diagram stopped only in the catalog)."""
        if self.standby:
            raise Unavailable(code=codes.RUNTIME_UNAVAILABLE)
        return self.runtime


def here(svc) -> Here:
    """The runtime as it is now, the field and the lease read once. A standby, or a holder cut
    off from the catalog past its lease's end, must not acknowledge a tuple its successor would
    miss."""
    runtime, lease = svc.runtime, svc.lease
    return Here(runtime, lease is not None and not lease.valid(), lease is not None)
