"""What one app instance works with, kept in ``app.extensions["sluice"]``.

Built whole by ``create_app`` (``server/app.py``), which holds the one construction order:
every part is there from the start, but ``variants``, which works on the services, made right
after them. The settings are the frozen configuration; what changes at run time has its own
object (``limits``). Optional, because the feature is: ``relay`` (with a ``redis_url``),
``lease`` (with the runtime on) and ``runtime`` (``None`` also while this server does not hold
the lease: callers ask ``server.ingest.here``, never the field).
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
    connections: Connections  # started by server.realtime.sockets.init_app
    changes: ChangeNotices  # started by server.realtime.changes.init_app
    relay: Relay | None  # with a redis_url: results between servers (realtime/relay.py)
    variants: Variants = field(init=False)  # made by create_app on these services
    runtime: Runtime | None = None  # started and stopped by the lease (server.ingest.here)
    lease: RuntimeLease | None = None  # with the runtime on (server/control/lease.py)
    on_close: list[Callable[[], None]] = field(default_factory=list)  # run by close_app, in order


def services() -> Services:
    return current_app.extensions["sluice"]
