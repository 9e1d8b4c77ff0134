"""What one app instance works with, kept in ``app.extensions["sluice"]``.

The settings are the frozen configuration; what changes at run time has its own object
(``limits``) or is started later (``runtime``, ``connections``, ``changes``, ``variants``:
``None`` until then).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from flask import current_app

from catalog import Catalog
from server.control.datadir import DataDir
from server.limits.rate import TupleRate
from server.limits.throttle import Throttle
from server.settings.config import Settings
from server.settings.limits import LiveLimits

if TYPE_CHECKING:  # types only: realtime imports this module, and the runtime loads Spark
    from server.control.lease import RuntimeLease
    from server.control.variants import Variants
    from server.realtime.changes import ChangeNotices
    from server.realtime.delivery import Delivery
    from server.realtime.relay import Relay
    from server.realtime.sockets import Connections
    from server.runtime import Runtime


@dataclass
class Services:
    settings: Settings
    data_dir: DataDir  # this process's exclusive claim on ``settings.data_dir``
    catalog: Catalog
    limits: LiveLimits
    throttle: Throttle
    rate: TupleRate
    delivery: Delivery
    runtime: Runtime | None = None  # None without Spark (``runtime: false``)
    connections: Connections | None = None  # set by server.realtime.sockets.init_app
    changes: ChangeNotices | None = None  # set by server.realtime.changes.init_app
    variants: Variants | None = None  # set by create_app (server/control/variants.py)
    lease: RuntimeLease | None = None  # with the runtime on (server/control/lease.py)
    relay: Relay | None = None  # with a redis_url: results between servers (realtime/relay.py)
    on_close: list[Callable[[], None]] = field(default_factory=list)  # run by close_app, in order


def services() -> Services:
    return current_app.extensions["sluice"]
