"""The app factory: settings, catalog, security, the API, sockets and (optionally) the runtime.

``sluice serve`` (``server/cli/serve.py``) does, in effect::

    app = create_app({"config_file": "sluice.yaml"})
    socketio_of(app).run(app, host=..., port=...)
    close_app(app)
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask
from flask_socketio import SocketIO

from catalog import Catalog
from catalog.bootstrap import ensure_admin
from server.control import datadir
from server.control.variants import Variants
from server.http import api, errors, guard, openapi, security
from server.ingest.here import here
from server.limits import store
from server.limits.rate import TupleRate
from server.limits.throttle import Throttle
from server.realtime import changes, sockets
from server.realtime.audiences import Rechecks
from server.realtime.delivery import Delivery
from server.realtime.extension import ASYNC_MODE
from server.realtime.relay import Relay
from server.realtime.rooms import SocketRooms
from server.realtime.standby import Keepalive, RewriteGuard
from server.services import Services
from server.settings import limits
from server.settings.config import Settings, load_settings
from server.settings.limits import LiveLimits

WEB = Path(__file__).resolve().parent.parent / "web"


def _settings(config: Mapping[str, Any] | Settings | None) -> Settings:
    """Defaults, then the config file and ``SLUICE_*`` environment, then test overrides."""
    if isinstance(config, Settings):
        return config
    overrides = dict(config or {})
    config_file = overrides.pop("config_file", None)
    return load_settings(config_file, overrides)


def catalog_url(settings: Settings) -> str:
    return settings.catalog_url or f"sqlite:///{settings.data_dir / 'catalog.sqlite'}"


def create_app(
    config: Mapping[str, Any] | Settings | None = None, claimed: datadir.DataDir | None = None
) -> Flask:
    """The app on ``settings.data_dir``, claimed here unless the caller holds the claim
    (``sluice serve`` claims it before gunicorn forks the worker that builds the app)."""
    settings = _settings(config)
    if claimed is not None:
        return _build(settings, claimed)
    claimed = datadir.claim(settings.data_dir)
    try:
        return _build(settings, claimed)
    except BaseException:
        claimed.release()
        raise


def _build(settings: Settings, claimed: datadir.DataDir) -> Flask:
    app = Flask(__name__, static_folder=str(WEB), static_url_path="/static")
    app.config.update(
        SECRET_KEY=settings.ensure_secret(), TESTING=settings.testing, JSON_SORT_KEYS=False
    )
    catalog = Catalog.open(
        catalog_url(settings),
        bcrypt_rounds=settings.bcrypt_rounds,
        session_ttl=settings.session_ttl_seconds,
    )
    if settings.admin_user and settings.admin_password:
        ensure_admin(catalog, settings.admin_user, settings.admin_password.get_secret_value())
    live = LiveLimits(settings)
    counts = store.open_store(settings.redis_url)
    socketio = SocketIO()
    delivery = Delivery(catalog, SocketRooms(socketio, sockets.NAMESPACE))
    relay = None
    if settings.redis_url is not None:

        def holding() -> bool:
            return here(svc).runtime is not None

        relay = Relay(settings.redis_url.get_secret_value(), delivery, holding)
    svc = Services(
        settings,
        claimed,
        catalog,
        live,
        Throttle(lambda: live.login_attempts_per_minute, counts),
        TupleRate(lambda: live.ingest_tuples_per_second, counts),
        delivery,
        sockets.connections(catalog, socketio, settings),
        changes.notices(socketio, sockets.NAMESPACE),
        relay,
    )
    svc.variants = Variants(svc)
    rechecks = Rechecks(catalog, svc.delivery.settle)
    rechecks.start()
    svc.on_close.append(rechecks.stop)
    svc.on_close.append(counts.close)
    if svc.relay is not None:
        svc.relay.start()
        svc.on_close.append(svc.relay.stop)
        keepalive = Keepalive(svc, max(0.5, settings.variant_linger_seconds / 3))
        keepalive.start()
        svc.on_close.append(keepalive.stop)
    svc.delivery.check_relayed = RewriteGuard(catalog).check
    live.update(limits.stored_changes(catalog))
    app.extensions["sluice"] = svc

    errors.init_app(app)
    security.init_app(app, settings.max_request_bytes, secure_cookies=bool(settings.tls_cert))
    guard.init_app(app)
    api.init_app(app)
    openapi.init_app(app)
    _pages(app)
    socketio.init_app(app, async_mode=ASYNC_MODE, max_http_buffer_size=settings.max_request_bytes)
    sockets.init_app(app, svc, socketio)
    svc.on_close.append(changes.init_app(svc).stop)
    missing = guard.unguarded(app)
    if missing:
        raise RuntimeError(
            f"endpoints without the guard or a rule in catalog.policy: {', '.join(missing)}"
        )
    if settings.runtime:
        from server.control.diagrams import keep_runtime

        keep_runtime(svc)
    return app


def close_app(app: Flask) -> None:
    """Stop background work (demo feeds), the sweeper, the runtime (queries keep their
    checkpoints) and the catalog."""
    svc = app.extensions["sluice"]
    for stop in svc.on_close:
        stop()
    svc.connections.stop()
    if svc.lease is not None:
        svc.lease.stop()
    runtime = here(svc).runtime
    if runtime is not None:
        runtime.close()
    if svc.lease is not None:
        svc.lease.release()  # after the runtime closed: a standby may start on its files now
    svc.catalog.close()
    svc.data_dir.release()


def _pages(app: Flask) -> None:
    """The web pages are public files; their API calls are what is guarded."""
    app.view_functions["static"] = guard.guarded()(app.view_functions["static"])

    @app.get("/")
    @guard.guarded()
    def index():
        """The web console's start page."""
        return app.send_static_file("index.html")
