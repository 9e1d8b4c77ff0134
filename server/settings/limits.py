"""The limits an administrator may change while the server runs, and how a change takes effect.

Precedence: the embedded defaults, the config file and ``SLUICE_*`` variables give each limit
its configured value; an administrator's change (``PATCH /api/v1/system/settings``) is kept in
the catalog and wins over it, from then on and at every start, until the administrator resets
it with ``null`` and the configured value applies again. Where data lives, the secret and TLS
are never changed at run time: they stay in the config file.

The configuration stays frozen; the values in force live in one :class:`LiveLimits`, which
tells a holder of a copy (the runtime's log) when they change; the login throttle and the
ingestion rate read it at each use.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

import jsonschema

from catalog import Catalog, Subject

if TYPE_CHECKING:
    from server.settings.config import Settings

log = logging.getLogger(__name__)

CHANGEABLE = (
    "max_batch_tuples",
    "login_attempts_per_minute",
    "ingest_tuples_per_second",
    "max_windows_per_tuple",
    "max_window_seconds",
    "max_join_bound_seconds",
    "max_open_windows",
    "max_window_rows",
    "max_state_rows",
    "max_rewrite_variants",
)
# The diagram cost ceilings among them, by the boxes/cost.py parameter each bounds.
COST_CEILINGS = {
    "windows_per_tuple": "max_windows_per_tuple",
    "window_seconds": "max_window_seconds",
    "join_bound_seconds": "max_join_bound_seconds",
    "open_windows": "max_open_windows",
    "window_rows": "max_window_rows",
}
LIMIT = {"type": "integer", "minimum": 1, "maximum": 10_000_000}

Follower = Callable[[Mapping[str, int]], None]


class LiveLimits:
    """The changeable limits in force: their configured values, then administrators' changes.

    Readers take a value without locking (each update swaps in a new mapping); a change is
    stored and put in force before the next one starts.
    """

    def __init__(self, settings: Settings) -> None:
        self.configured: Mapping[str, int] = MappingProxyType(
            {name: getattr(settings, name) for name in CHANGEABLE}
        )
        self._values: Mapping[str, int] = self.configured
        self._followers: list[Follower] = []
        self._lock = threading.Lock()

    @property
    def max_batch_tuples(self) -> int:
        return self._values["max_batch_tuples"]

    @property
    def login_attempts_per_minute(self) -> int:
        return self._values["login_attempts_per_minute"]

    @property
    def ingest_tuples_per_second(self) -> int:
        return self._values["ingest_tuples_per_second"]

    @property
    def max_rewrite_variants(self) -> int:
        return self._values["max_rewrite_variants"]

    def cost_ceilings(self) -> dict[str, int]:
        """The ceilings in force on a diagram's cost, by ``boxes.cost`` parameter."""
        values = self._values
        return {parameter: values[name] for parameter, name in COST_CEILINGS.items()}

    def values(self) -> dict[str, int]:
        return dict(self._values)

    def follow(self, follower: Follower) -> None:
        """Call ``follower(values)`` now and after every update."""
        with self._lock:
            self._followers.append(follower)
            follower(self._values)

    def update(self, values: Mapping[str, int]) -> None:
        """Put ``values`` (some or all limits) in force and tell every follower."""
        with self._lock:
            self._update(values)

    def change(self, store: Callable[[Mapping[str, int]], Mapping[str, int]]) -> dict[str, int]:
        """Run ``store(configured) -> values in force`` and put its answer in force, one change
        at a time, so two administrators' changes cannot be applied out of order."""
        with self._lock:
            values = store(self.configured)
            self._update(values)
        return dict(values)

    def _update(self, values: Mapping[str, int]) -> None:
        self._values = MappingProxyType({**self._values, **values})
        for follower in self._followers:
            follower(self._values)


def change(
    live: LiveLimits, catalog: Catalog, subject: Subject, changes: Mapping[str, int | None]
) -> dict[str, int]:
    """Store an administrator's changes (all or none) in ``catalog`` and put them in force."""
    return live.change(lambda configured: catalog.system.change(subject, changes, configured))


def stored_changes(catalog: Catalog) -> dict[str, int]:
    """The changes kept in the catalog. A stored value this server no longer accepts is skipped
    with a warning rather than refusing to start, since only a running server can reset it."""
    stored = {}
    for name, value in catalog.system.stored().items():
        if name in CHANGEABLE and jsonschema.Draft202012Validator(LIMIT).is_valid(value):
            stored[name] = value
            log.info("system setting %s=%r, changed by an administrator, is in force", name, value)
        else:
            log.warning(
                "ignoring the stored system setting %s=%r: not a valid limit here", name, value
            )
    return stored
