"""The limits an administrator may change while the server runs, and how a change takes effect.

Precedence: the embedded defaults, the config file and ``SLUICE_*`` variables give each limit
its configured value; an administrator's change (``PATCH /api/v1/system/settings``) is kept in
the catalog and wins over it, from then on and at every start, until the administrator resets
it with ``null`` and the configured value applies again. Where data lives, the secret and TLS
are never changed at run time: they stay in the config file.
"""
from __future__ import annotations

import logging
import threading
from typing import Any, Mapping

import jsonschema

from catalog import Subject

log = logging.getLogger(__name__)

CHANGEABLE = ("max_batch_tuples", "login_attempts_per_minute", "ingest_tuples_per_second")
LIMIT = {"type": "integer", "minimum": 1, "maximum": 10_000_000}
_changing = threading.Lock()   # a change is stored and put in force before the next one


def configured(settings) -> dict[str, Any]:
    return {name: getattr(settings, name) for name in CHANGEABLE}


def _apply(svc, values: Mapping[str, Any]) -> None:
    """Put values in force everywhere they are read: the settings, the login throttle, the
    ingestion rate and the runtime's log."""
    for name, value in values.items():
        setattr(svc.settings, name, value)
    svc.throttle.limit = svc.settings.login_attempts_per_minute
    svc.extra["rate"].per_second = svc.settings.ingest_tuples_per_second
    if svc.runtime is not None:
        svc.runtime.set_max_tuples(svc.settings.max_batch_tuples)


def change(svc, subject: Subject, changes: Mapping[str, Any]) -> dict[str, Any]:
    """Store an administrator's changes (all or none) and put them in force."""
    with _changing:
        values = svc.catalog.system.change(subject, changes, svc.configured_limits)
        _apply(svc, values)
    return values


def init_app(svc) -> None:
    """Remember the configured values, then put the stored changes in force. A stored value
    this server no longer accepts is skipped with a warning rather than refusing to start,
    since only a running server can reset it."""
    svc.configured_limits = configured(svc.settings)
    stored = {}
    for name, value in svc.catalog.system.stored().items():
        if name in CHANGEABLE and jsonschema.Draft202012Validator(LIMIT).is_valid(value):
            stored[name] = value
        else:
            log.warning("ignoring the stored system setting %s=%r: not a valid limit here",
                        name, value)
    _apply(svc, stored)
