"""A rewrite can widen an aggregate's window to a policy's minimum (docs/rewrite.md), so the
plan that runs, not only the one the user wrote, is held to the system's cost ceilings and the
deployer's role limits; a refused rewrite is not left recorded as the diagram's. No Spark: the
refusals come before the runtime is asked for anything."""

from __future__ import annotations

import pytest
from shipco import shipco_running

from boxes.errors import Denied, DiagramInvalid
from catalog import ObjectType
from server.control.diagrams import affordable_rewrite, run_named
from server.control.rewrites import deployed_plan

POLICIES = [
    {
        "name": "hourly",
        "role": "SHIPCO",
        "streams": {"ais": "*"},
        "privilege": "count",
        "window": {"size": "10m", "step": "10m"},
    }
]
DOC = {
    "version": 1,
    "name": "w",
    "inputs": {"ais": {}},
    "boxes": {
        "n": {
            "type": "aggregate",
            "in": "ais",
            "window": {"size": "10s", "slide": "10s"},
            "aggregates": {"n": "count()"},
        }
    },
    "outputs": {"w_out": {"from": "n"}},
}


@pytest.fixture
def world(app, template):
    """sc (SHIPCO) may count ``ais`` over windows of at least 10 minutes; its diagram ``w``
    counts over 10 s and is recorded as running (the deploy route does that before ``run``)."""
    return shipco_running(
        app,
        template,
        schema={"fields": {"mmsi": "long", "t": "timestamp"}, "event_time": "t"},
        box_type="aggregate",
        policies=POLICIES,
        doc=DOC,
    )


def _diagram(svc):
    return svc.catalog.core.snapshot.find(ObjectType.DIAGRAM, "w")


def test_a_window_widened_past_a_ceiling_is_refused_at_deploy(world):
    svc, _, sc, _ = world
    svc.limits.update({"max_window_seconds": 300})  # the user's 10 s is well within it
    with pytest.raises(DiagramInvalid) as err:
        run_named(svc, "w", sc)
    assert [(p.code, p.path, p.message) for p in err.value.problems] == [
        ("COST_LIMIT_EXCEEDED", "boxes.n.window.size", "window_seconds is 600.0; the limit is 300")
    ]
    assert svc.catalog.rewrites.of(_diagram(svc)) is None


def test_a_window_widened_past_the_deployers_role_limit_is_refused(world):
    svc, joe, sc, _ = world
    svc.catalog.operators.set_limits(joe, "SHIPCO", {"window_seconds": 60})
    with pytest.raises(Denied) as err:
        run_named(svc, "w", sc)
    assert err.value.code == "OVER_LIMIT" and "600" in err.value.message
    assert svc.catalog.rewrites.of(_diagram(svc)) is None
    [refusal, *_] = svc.catalog.audit(joe, event="deploy")
    assert (refusal.object, refusal.allowed, refusal.reason) == ("diagram:w", False, "over limits")


def test_a_widened_window_within_every_limit_stays_recorded(world):
    svc, joe, sc, plan = world
    svc.catalog.operators.set_limits(joe, "SHIPCO", {"window_seconds": 600})
    running = deployed_plan(svc.catalog, _diagram(svc), DOC, plan, sc)
    affordable_rewrite(svc, _diagram(svc), running, sc)
    [widened] = [b for b in running.boxes if b.name == "n"]
    assert widened.size == 600
    assert svc.catalog.rewrites.of(_diagram(svc)).deployer == "sc"
