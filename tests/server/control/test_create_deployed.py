"""``POST /diagrams`` with ``"deploy": true``: created and recorded running in one catalog
transaction, then started, on a live server with a runtime (issue 40's create-and-deploy)."""

from __future__ import annotations

import pytest
from serverkit import PASSWORD, Client, LiveServer, overrides

from catalog import repository
from server.app import close_app, create_app
from server.control.diagrams import start_runtime
from server.runtime import Runtime

PASS = {
    "version": 1,
    "name": "passing",
    "inputs": {"in1": {}},
    "boxes": {},
    "outputs": {"passed": {"from": "in1"}},
}


@pytest.fixture
def served(tmp_path, spark):
    """A live server whose runtime runs on the suite's Spark session."""
    app = create_app(overrides(tmp_path, admin_user="joe", admin_password=PASSWORD))
    runtime = Runtime(tmp_path / "runtime", session=spark)
    start_runtime(app.extensions["sluice"], runtime)
    server = LiveServer(app)
    yield server, runtime, app.extensions["sluice"].catalog
    server.stop()
    close_app(app)


def test_a_diagram_created_with_deploy_runs_after_one_catalog_change(served):
    server, runtime, catalog = served
    joe = Client(server.url, "joe", PASSWORD)
    joe.call("POST", "/schemas", 201, json={"name": "s", "fields": {"x": "long"}})
    joe.call("POST", "/streams", 201, json={"name": "in1", "schema": "s"})
    with catalog.core.store.reader() as conn:
        before = repository.catalog_version(conn)
    created = joe.call("POST", "/diagrams", 201, json={"document": PASS, "deploy": True})
    assert created["status"] == "running"
    with catalog.core.store.reader() as conn:
        assert (
            repository.catalog_version(conn) == before + 1
        )  # the create and its status: one change
    assert runtime.plan("passing") is not None
    assert joe.call("GET", "/diagrams/passing")["status"] == "running"
    (entry,) = joe.call("GET", "/audit?event=query_status")["entries"]
    assert (entry["object"], entry["allowed"]) == ("diagram:passing", True)
