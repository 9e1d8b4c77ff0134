"""The server under test: ``app -> client -> auth`` over a real SQLite catalog in a temp dir.

The world (see ``serverkit.build_world``) is built once per session, with a session token
per user; each test gets a copy of its files, so tests stay independent and fast.
"""

from __future__ import annotations

import shutil

import pytest
from serverkit import PASSWORD, Auth, LiveServer, Server, build_world, overrides
from sparkkit import Standalone, bare_python

from server.app import close_app, create_app
from server.control.diagrams import start_runtime
from server.runtime import Runtime, RuntimeSettings


@pytest.fixture(scope="session")
def template(tmp_path_factory):
    """The world built once, with a session per user: each test gets a copy of its files."""
    path = tmp_path_factory.mktemp("world")
    app = create_app(overrides(path))
    passwords = build_world(app.extensions["sluice"].catalog)
    tokens = {
        user: app.extensions["sluice"].catalog.sessions.login(user, pw)[0]
        for user, pw in passwords.items()
    }
    close_app(app)
    return path, passwords, tokens


@pytest.fixture
def app(tmp_path, template):
    shutil.copytree(template[0], tmp_path / "data")
    app = create_app(overrides(tmp_path / "data"))
    yield app
    close_app(app)


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def auth(client, template):
    auth = Auth(client, template[1])
    auth.tokens.update(template[2])
    return auth


@pytest.fixture
def serve(tmp_path):
    """``serve(demo=False, **settings)``: a ``sluice serve`` process (not yet started), killed
    at the end of the test if still running."""
    made = []

    def make(demo: bool = False, **settings) -> Server:
        made.append(Server(tmp_path, demo, **settings))
        return made[-1]

    yield make
    for server in made:
        if server.running():
            server.kill()


@pytest.fixture
def live(request, tmp_path, spark):
    """The app with the Spark runtime (the suite's session) on a loopback port; joe, with
    PASSWORD, is its only user and administrator. Parametrized indirectly, the parameter is
    more of the runtime's settings (e.g. ``{"realtime_slots": 1}``)."""
    app = create_app(overrides(tmp_path, admin_user="joe", admin_password=PASSWORD))
    more = getattr(request, "param", {})
    runtime = Runtime(
        tmp_path / "runtime", settings=RuntimeSettings(box_metrics=True, **more), session=spark
    )
    start_runtime(app.extensions["sluice"], runtime)
    server = LiveServer(app)
    yield server
    server.stop()
    close_app(app)


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    """A Spark standalone master and worker on loopback with a shared secret, and the Python
    its executors run (Sluice's dependencies, not Sluice): settings for ``serve``; stopped
    after the module that uses it, so its JVMs do not outlive it."""
    cluster = Standalone(tmp_path_factory.mktemp("spark"))
    try:
        cluster.start()
        cluster.python = bare_python(tmp_path_factory.mktemp("bare"))
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(params=["memory", "redis"])
def limit_store(request):
    """A store for the login throttle and the ingestion rate: this process's memory, or the
    suite's Redis (emptied), so that one test shows both behave alike."""
    from server.limits.store import MemoryStore, RedisStore

    if request.param == "memory":
        yield MemoryStore()
        return
    store = RedisStore(request.getfixturevalue("redis_url"))
    yield store
    store.close()
