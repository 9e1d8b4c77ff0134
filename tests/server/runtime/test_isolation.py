"""One diagram's deploy never holds up another's requests, and every deploy has a time limit
(issue 12, isolation): the runtime held one lock through a whole deploy or restart (up to
minutes), so a slow deploy made every other diagram's status request wait."""

from __future__ import annotations

import threading
import time

import pytest
from runtime_helpers import TRADE, WAIT, Collector, plan_of, union_doc

from boxes.errors import SluiceError
from server.runtime import Runtime, overlap, sharing
from server.runtime.states import STARTING

PROMPT = 1.0  # seconds: what "answers at once" means on a busy two-core machine


def held_deploys(runtime: Runtime, monkeypatch, plan) -> threading.Event:
    """Make the deploy of ``plan``'s diagram wait (its shared execution's: ``sharing.py``),
    after its outputs are taken and before its queries start, until the returned event is set
    (the slow part of a real deploy: Spark starting queries)."""
    release = threading.Event()
    start_queries = runtime._launcher._start_queries
    held = (plan.name, sharing.HOST + overlap.placement(plan)[0])

    def slow(deployment, start):
        if deployment.diagram_id in held:
            assert release.wait(WAIT), "the test never released the deploy"
        return start_queries(deployment, start)

    monkeypatch.setattr(runtime._launcher, "_start_queries", slow)
    return release


def test_a_slow_deploy_holds_up_no_other_diagrams_status_or_stop(runtime, monkeypatch):
    for stream in ("a_in", "b_in"):
        runtime.create_stream(stream, TRADE)
    rows = Collector()
    runtime.deploy("b", plan_of(union_doc("b", ["b_in"])), rows)
    slow = plan_of(union_doc("a", ["a_in"]))
    release = held_deploys(runtime, monkeypatch, slow)
    deploying = threading.Thread(target=runtime.deploy, args=("a", slow))
    deploying.start()
    try:
        assert runtime.wait_for_state("a", STARTING, timeout=WAIT), "a's deploy never began"
        began = time.monotonic()
        assert runtime.status("b")["state"] == "running"
        assert runtime.status("a")["state"] == STARTING  # its own status does not wait either
        runtime.stop("b")
        assert runtime.status("b")["state"] == "stopped"
        assert time.monotonic() - began < PROMPT
    finally:
        release.set()
        deploying.join(WAIT)
    assert runtime.status("a")["state"] == "running"


def test_a_deploy_whose_queries_are_not_up_in_time_is_abandoned(make_runtime, spark, monkeypatch):
    runtime = make_runtime(deploy_timeout=0.5)
    # The source's hello goes unheard, as if its query never got going.
    monkeypatch.setattr(runtime._launcher.heads._server, "arrived", lambda client: None)
    runtime.create_stream("t_in", TRADE)
    with pytest.raises(SluiceError) as refused:
        runtime.deploy("t", plan_of(union_doc("t", ["t_in"])))
    assert refused.value.code == "DEPLOY_TIMEOUT"
    assert "did not start within 0.5 s" in refused.value.message
    status = runtime.status("t")
    assert status["state"] == "failed" and "DEPLOY_TIMEOUT" in status["error"]
    assert status["outputs"] == {}
    assert not [q for q in spark.streams.active if q.name.startswith(("t.", sharing.HOST))]
