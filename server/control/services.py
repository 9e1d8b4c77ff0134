"""What one app instance works with, kept in ``app.extensions["sluice"]``."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flask import current_app

from catalog import Catalog
from server.settings.config import Settings
from server.http.security import Throttle


@dataclass
class Services:
    settings: Settings
    catalog: Catalog
    throttle: Throttle
    runtime: Any = None          # server.runtime.Runtime once started; None without Spark
    connections: Any = None      # server.realtime.sockets.Connections
    delivery: Any = None         # server.realtime.delivery.Delivery
    configured_limits: dict = field(default_factory=dict)  # server.settings.limits: before changes
    extra: dict = field(default_factory=dict)
    on_close: list = field(default_factory=list)   # callables run by close_app, first to last


def services() -> Services:
    return current_app.extensions["sluice"]
