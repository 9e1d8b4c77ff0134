"""Fixtures shared by the whole suite: one real SparkSession for every test that needs Spark, and
one real PostgreSQL cluster for every test that needs a PostgreSQL catalog, and one real Redis
for the limits several servers share. Each test is marked with what it needs (``spark``,
``browser``, ``postgres``, ``slow``; pyproject.toml says what each means) from the fixtures it
uses, so ``make test-fast`` can leave out the tests that need a JVM, Chromium, a cluster or minutes.
"""

from __future__ import annotations

import importlib.util
import shutil

import pytest

# The fixtures that give a test each marker. ``item.fixturenames`` is a test's whole closure (the
# fixtures its fixtures use included), so ``live`` or ``runtime`` mark a test ``spark`` through
# ``spark``. A fixture asked for at run time (``request.getfixturevalue``) is not in it: such a
# fixture's parameter carries its marker itself (``pytest.param(..., marks=...)``).
MARKED_BY = {
    "spark": {"spark", "standalone", "demo_server"},
    "browser": {"browser"},
    "postgres": {"postgres"},
    # a `sluice serve` process (seconds to start, Spark's JVM in it for a demo), a Spark
    # standalone master and worker
    "slow": {"serve", "demo_server", "standalone"},
}


def pytest_collection_modifyitems(items):
    for item in items:
        used = set(item.fixturenames)
        for marker, fixtures in MARKED_BY.items():
            if used & fixtures:
                item.add_marker(marker)


@pytest.fixture(scope="session", autouse=True)
def route_builders_compiled_once():
    """Werkzeug turns each route of an app into two URL-builder functions by compiling Python
    source: a fifth of ``make test-fast``'s time, as every test builds its own app. Without
    defaults a builder's code depends only on the rule's parsed parts (it finds the rule's
    converters through its ``self`` when called), so each is compiled once per session."""
    from werkzeug.routing import Rule

    compiled: dict = {}
    compile_builder = Rule._compile_builder

    def once(rule, append_unknown=True):
        if rule.defaults:  # converted into the code: compiled for each rule, as without this
            return compile_builder(rule, append_unknown)
        key = (rule.rule, append_unknown, tuple(rule._trace))
        if key not in compiled:
            compiled[key] = compile_builder(rule, append_unknown)
        return compiled[key]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Rule, "_compile_builder", once)
        yield


@pytest.fixture(scope="session")
def spark():
    """The suite's one local SparkSession (starting one costs 10-15 s; never start two)."""
    if shutil.which("java") is None:
        pytest.fail(
            "Java 17 is required for Spark tests: sudo apt-get install -y openjdk-17-jre-headless"
        )
    from server.runtime.spark import build_session

    session = build_session("local[2]")
    yield session
    for query in session.streams.active:
        query.stop()
    session.stop()


@pytest.fixture(scope="session")
def postgres():
    """The suite's one PostgreSQL cluster (``tests/postgres.py``), with its migrated catalog
    database. Missing binaries fail the test, naming the package."""
    from tests import postgres as pg

    bin_dir = pg.binaries()
    if bin_dir is None:
        pytest.fail(pg.missing_message())
    cluster = pg.Cluster(bin_dir).start()
    try:
        yield cluster.prepare()
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def redis_server():
    """The suite's one ``redis-server`` (``tests/redisserver.py``) on a loopback port. A missing
    binary fails the test, naming the package."""
    from tests import redisserver

    if shutil.which("redis-server") is None:
        pytest.fail(redisserver.missing_message())
    server = redisserver.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_url(redis_server):
    """The URL of the suite's Redis, emptied for this test."""
    redis_server.client.flushdb()
    return redis_server.url


@pytest.fixture(scope="session")
def s3_server():
    """The suite's one S3 endpoint: moto's server (``moto[server]``, a test extra) on a loopback
    port, with one bucket; a real S3 HTTP API for the object-store tests."""
    from tests import s3server

    if importlib.util.find_spec("moto") is None:
        pytest.fail("the object-store tests need moto's S3 server: pip install 'moto[server]>=5'")
    server = s3server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def s3_url(s3_server):
    """A fresh prefix in the suite's bucket, as a URL ``pyarrow.fs`` reads (endpoint and keys
    in it)."""
    return s3_server.url_for_new_prefix()
