"""The REST API under ``/api/v1``: one blueprint per resource, each module exposing ``bp``."""

from __future__ import annotations

from flask import Blueprint, Flask

from server.http.api import (
    audit,
    auth,
    box_types,
    catalog,
    dashboards,
    diagrams,
    levels,
    outputs,
    permissions,
    policies,
    roles,
    schemas,
    streams,
    system,
    users,
)

PREFIX = "/api/v1"
MODULES = (
    auth,
    catalog,
    schemas,
    streams,
    box_types,
    diagrams,
    outputs,
    dashboards,
    permissions,
    users,
    roles,
    levels,
    policies,
    audit,
    system,
)


def init_app(app: Flask) -> None:
    api = Blueprint("api", __name__, url_prefix=PREFIX)
    for module in MODULES:
        api.register_blueprint(module.bp)
    app.register_blueprint(api)
