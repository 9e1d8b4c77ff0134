"""System settings an administrator may change while the server runs (CHANGE_SYSTEM, audited).

Only limits are changeable here; where data lives, the secret and TLS stay in the config file.
A change lasts until the server restarts, when the config file is read again.
"""
from __future__ import annotations

from flask import Blueprint, g

from server.api.schema_parts import obj
from server.context import services
from server.guard import session, subject

bp = Blueprint("system", __name__, url_prefix="/system")

LIMIT = {"type": "integer", "minimum": 1, "maximum": 10_000_000}
CHANGEABLE = ("max_batch_tuples", "login_attempts_per_minute", "ingest_tuples_per_second")
CHANGE = {**obj({key: LIMIT for key in CHANGEABLE}), "minProperties": 1}


def _current() -> dict:
    settings = services().settings
    return {key: getattr(settings, key) for key in CHANGEABLE}


@bp.get("/settings")
@session()
def show():
    """The changeable settings (administrators)."""
    services().catalog.core.require_admin(subject(), "system_settings_read")
    return {"settings": _current()}


@bp.patch("/settings")
@session(body=CHANGE)
def change():
    """Change settings; each change is audited with its old and new value."""
    svc = services()
    for key, value in sorted(g.body.items()):
        svc.catalog.change_system(subject(), "system_settings", setting=key,
                                  old=getattr(svc.settings, key), new=value)
        setattr(svc.settings, key, value)
    svc.throttle.limit = svc.settings.login_attempts_per_minute
    svc.extra["rate"].per_second = svc.settings.ingest_tuples_per_second
    return {"settings": _current()}

