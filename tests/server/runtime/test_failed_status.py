"""A diagram the runtime has given up on says so (issue 42): after its automatic restarts, its
status is ``failed`` in every answer that shows it, not ``running`` beside a progress that says
``failed``. One restart here, and a query that fails every time: the rows it must read next
are gone from the log (``LOG_GAP``)."""

from __future__ import annotations

import pytest
from serverkit import PASSWORD, Client, LiveServer, overrides, wait_until

from server.app import close_app, create_app
from server.control.diagrams import start_runtime
from server.runtime import Runtime, RuntimeSettings

DOOMED = {
    "version": 1,
    "name": "doomed",
    "inputs": {"in1": {}},
    "boxes": {},
    "outputs": {"doomed_out": {"from": "in1"}},
}
GIVE_UP = RuntimeSettings(max_restarts=1, restart_backoff=0.1, reconcile_every=0.2)


@pytest.fixture
def quick_to_give_up(tmp_path, spark):
    """The app with a runtime (the suite's session) that restarts a failed diagram once."""
    app = create_app(overrides(tmp_path, admin_user="joe", admin_password=PASSWORD))
    runtime = Runtime(tmp_path / "runtime", settings=GIVE_UP, session=spark)
    start_runtime(app.extensions["sluice"], runtime)
    server = LiveServer(app)
    yield server, runtime
    server.stop()
    close_app(app)


def statuses(joe: Client) -> dict[str, str]:
    """The diagram's status as its status, its description and the list of diagrams say."""
    (listed,) = [d["status"] for d in joe.call("GET", "/diagrams")["diagrams"]]
    return {
        "status": joe.call("GET", "/diagrams/doomed/status")["status"],
        "described": joe.call("GET", "/diagrams/doomed")["status"],
        "listed": listed,
    }


def test_a_diagram_failed_for_good_says_failed(quick_to_give_up):
    server, runtime = quick_to_give_up
    joe = Client(server.url, "joe", PASSWORD)
    fields = {"time": "timestamp", "symbol": "string", "price": "double"}
    joe.call("POST", "/schemas", 201, json={"name": "s", "fields": fields, "event_time": "time"})
    joe.call("POST", "/streams", 201, json={"name": "in1", "schema": "s"})
    joe.call("POST", "/diagrams", 201, json={"document": DOOMED})
    joe.call("POST", "/diagrams/doomed/deploy")
    assert set(statuses(joe).values()) == {"running"}
    joe.call("POST", "/diagrams/doomed/stop")
    tuple_ = {"time": "2026-01-01T00:00:00+00:00", "symbol": "x", "price": 1.0}
    joe.call("POST", "/streams/in1/tuples", json=[tuple_])
    for segment in runtime.log.directory("in1").glob("*.seg"):
        segment.unlink()  # the rows the stopped diagram reads next are lost
    joe.call("POST", "/diagrams/doomed/deploy")

    answer = wait_until(
        lambda: (a := joe.call("GET", "/diagrams/doomed/status"))["status"] == "failed" and a,
        timeout=120,
        what="the diagram's status to say failed",
    )
    progress = answer["progress"]
    assert progress["state"] == "failed" and progress["restarts"] == GIVE_UP.max_restarts
    assert "LOG_GAP" in progress["error"]
    assert set(statuses(joe).values()) == {"failed"}
