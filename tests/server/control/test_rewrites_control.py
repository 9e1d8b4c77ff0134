"""Rewriting at deploy and staleness, without Spark: what is recorded for the deployer, who
may read, and which changes (policies, attributes, roles, a restart) stop a stale diagram."""

from __future__ import annotations

import threading

import pytest
from shipco import shipco_running

from boxes.errors import Conflict, Denied
from catalog import ObjectType
from server.control.rewrites import deployed_plan, reader_rewrite, revalidate
from server.realtime.delivery import Labels

POLICIES = [
    {
        "name": "own",
        "role": "SHIPCO",
        "streams": {"ais": "*"},
        "where": "mmsi IN (self.ships)",
        "privilege": "read",
    },
    {"name": "all", "role": "ADMIN", "streams": {"ais": "*"}, "privilege": "read"},
]
DOC = {
    "version": 1,
    "name": "w",
    "inputs": {"ais": {}},
    "boxes": {"f": {"type": "filter", "in": "ais", "where": "mmsi > 0"}},
    "outputs": {"w_out": {"from": "f"}},
}


@pytest.fixture
def world(app, template):
    """joe (ADMIN) and sc (SHIPCO, ships [1, 2]) with the policies above; sc's diagram ``w``
    recorded as running, deployed by sc."""
    return shipco_running(
        app,
        template,
        schema={"fields": {"mmsi": "long"}},
        box_type="filter",
        policies=POLICIES,
        doc=DOC,
        attributes={"ships": [1, 2]},
    )


def _diagram(svc):
    return svc.catalog.core.snapshot.find(ObjectType.DIAGRAM, "w")


def test_the_deployers_rewrite_is_recorded_and_decides_who_reads(world):
    svc, joe, sc, plan = world
    running = deployed_plan(svc.catalog, _diagram(svc), DOC, plan, sc)
    assert [b.name for b in running.boxes] != [b.name for b in plan.boxes]
    stored = svc.catalog.rewrites.of(_diagram(svc))
    assert stored.deployer == "sc" and stored.roles == {"SHIPCO"}
    assert [a["where"] for a in stored.added] == ["mmsi IN (1, 2)"]
    assert stored.to_dict(full=False)["added"][0].keys() == stored.added[0].keys() - {"where"}
    assert reader_rewrite(svc.catalog, "w", DOC, plan, stored.document, sc) is None
    theirs = reader_rewrite(svc.catalog, "w", DOC, plan, stored.document, joe)
    assert theirs is not None and theirs.document != stored.document  # ADMIN reads every ship
    svc.catalog.policies.delete(joe, "all")
    with pytest.raises(Denied) as err:  # no policy of ADMIN's now: denied, named
        reader_rewrite(svc.catalog, "w", DOC, plan, stored.document, joe)
    assert (err.value.code, err.value.details["stream"]) == ("REWRITE_DENIED", "ais")
    assert revalidate(svc, joe) == []


@pytest.mark.parametrize(
    "change",
    [
        lambda cat, joe: cat.policies.set_attributes(joe, "sc", {}),  # no self.ships: denied
        lambda cat, joe: cat.policies.delete(joe, "own"),
        lambda cat, joe: cat.accounts.unassign_role(joe, "sc", "SHIPCO"),
        lambda cat, joe: cat.accounts.set_enabled(joe, "sc", False),
    ],
)
def test_a_change_stops_the_stale_diagram_and_a_restart_refuses_it(world, change):
    svc, joe, sc, plan = world
    deployed_plan(svc.catalog, _diagram(svc), DOC, plan, sc)
    change(svc.catalog, joe)
    assert revalidate(svc, joe) == ["w"]
    diagram = _diagram(svc)
    assert diagram.status == "stopped" and svc.catalog.rewrites.of(diagram).stale
    [entry] = svc.catalog.audit(joe, event="rewrite_stale")
    assert (entry.object, entry.user) == ("diagram:w", "joe")
    with pytest.raises(Conflict) as err:
        deployed_plan(svc.catalog, diagram, DOC, plan, None)  # a restart
    assert err.value.code == "REWRITE_STALE"


@pytest.mark.parametrize(
    "change",
    [
        lambda cat, joe: cat.policies.set_attributes(joe, "sc", {"ships": [3]}),
        lambda cat, joe: cat.policies.put(joe, [{**POLICIES[0], "where": "mmsi > 5"}], True),
    ],
)
def test_a_change_the_deployer_may_still_run_swaps_the_rewrite_in(world, change):
    """The deployer's rewrite changed but is allowed: the diagram runs on under the new one,
    recorded and audited; at a restart after such a change made elsewhere, the same."""
    svc, joe, sc, plan = world
    deployed_plan(svc.catalog, _diagram(svc), DOC, plan, sc)
    svc.runtime = runtime = FakeRuntime()
    change(svc.catalog, joe)
    assert revalidate(svc, joe) == []
    diagram = _diagram(svc)
    stored = svc.catalog.rewrites.of(diagram)
    assert diagram.status == "running" and stored.stale is None and stored.deployer == "sc"
    assert [a["where"] for a in stored.added] in (["mmsi IN (3)"], ["mmsi > 5"])
    assert list(runtime.deployed) == ["w"]
    [entry] = svc.catalog.audit(joe, event="rewrite")[:1]
    assert (entry.object, entry.user, entry.reason) == ("diagram:w", "joe", "policy change")
    svc.catalog.policies.set_attributes(joe, "sc", {"ships": [4]})  # the server was down
    running = deployed_plan(svc.catalog, diagram, DOC, plan, None)
    assert svc.catalog.rewrites.of(diagram).added[0]["where"] in ("mmsi IN (4)", "mmsi > 5")
    assert running is not plan


def test_a_restart_runs_the_recorded_rewrite_and_an_unrelated_change_keeps_it(world):
    svc, joe, sc, plan = world
    first = deployed_plan(svc.catalog, _diagram(svc), DOC, plan, sc)
    svc.catalog.policies.set_attributes(joe, "joe", {"ships": [9]})
    assert revalidate(svc, joe) == []
    again = deployed_plan(svc.catalog, _diagram(svc), DOC, plan, None)
    assert again == first


def test_a_running_diagram_on_a_newly_protected_stream_is_stopped(world):
    svc, joe, sc, plan = world
    svc.catalog.policies.delete(joe, "own")
    svc.catalog.policies.delete(joe, "all")
    assert deployed_plan(svc.catalog, _diagram(svc), DOC, plan, sc) is plan  # unprotected
    assert svc.catalog.rewrites.of(_diagram(svc)) is None
    svc.catalog.policies.put(joe, POLICIES)
    assert revalidate(svc, joe) == ["w"]


def test_the_api_answers_what_it_stopped_and_the_deploy_denial_is_audited(world, client, auth):
    svc, joe, sc, plan = world
    deployed_plan(svc.catalog, _diagram(svc), DOC, plan, sc)
    body: dict = {"attributes": {}}  # no self.ships: sc's policy cannot apply, denied
    answer = client.put("/api/v1/policies/users/sc", json=body, headers=auth.headers("joe"))
    assert answer.json == {"attributes": {}, "stopped": ["w"]}
    stale = svc.catalog.rewrites.of(_diagram(svc)).stale
    assert "no policy of yours authorizes reading stream 'ais'" in stale
    assert "'own': the subject has no attribute 'ships'" in stale
    svc.catalog.policies.delete(joe, "own")
    with pytest.raises(Denied) as err:
        deployed_plan(svc.catalog, _diagram(svc), DOC, plan, sc)
    assert (err.value.code, err.value.details["stream"]) == ("REWRITE_DENIED", "ais")
    [entry] = svc.catalog.audit(joe, event="deploy", allowed=False)
    assert entry.user == "sc" and "'ais'" in entry.reason


class FakeRuntime:
    """What the variants ask of the runtime, recorded (Spark runs them in
    test_rewrite_variants.py)."""

    def __init__(self, disk=()) -> None:
        self.deployed: dict[str, tuple[str, ...]] = {}
        self.removed: list[str] = []
        self.gone = threading.Event()
        self.disk = list(disk)

    def deploy(self, diagram_id, plan, on_batch, relabel=None):
        self.deployed[diagram_id] = tuple(plan.outputs)

    def remove(self, diagram_id):
        self.removed.append(diagram_id)
        self.deployed.pop(diagram_id, None)
        self.gone.set()

    def on_disk(self):
        return self.disk

    def close(self):
        pass


def test_a_reader_with_another_rewrite_reads_a_shared_capped_variant(world):
    svc, joe, sc, plan = world
    deployed_plan(svc.catalog, _diagram(svc), DOC, plan, sc)
    svc.runtime = runtime = FakeRuntime()
    (resumable,) = svc.catalog.objects.resumable()
    stored = svc.catalog.rewrites.of(_diagram(svc))
    route = svc.variants.gate(resumable, DOC, plan, stored.document)
    assert route(sc, "w_out", True) == "w_out"  # the deployer's own rewrite
    with pytest.raises(Conflict) as err:  # a REST read starts nothing
        route(joe, "w_out", False)
    assert err.value.code == "REWRITE_VARIANT_NOT_RUNNING"
    mine = route(joe, "w_out", True)
    (variant,) = runtime.deployed
    assert variant.startswith("w.v-") and runtime.deployed[variant] == (mine,)
    assert mine == "w_out" + variant.removeprefix("w")
    assert route(joe, "w_out", False) == route(joe, "w_out", True) == mine  # shared, one
    assert svc.delivery.labels(mine) is not None
    svc.limits.update({"max_rewrite_variants": 1})
    svc.catalog.accounts.add_user(joe, "sd", "correct horse battery", ["SHIPCO"])
    svc.catalog.policies.set_attributes(joe, "sd", {"ships": [5]})
    sd = svc.catalog.sessions.login("sd", "correct horse battery")[1]
    with pytest.raises(Conflict) as err:
        route(sd, "w_out", True)
    assert (err.value.code, err.value.details["limit"]) == ("REWRITE_VARIANTS_FULL", 1)

    svc.variants.end("w")  # the diagram stopped: its variants go, with their outputs
    assert runtime.removed == [variant] and svc.variants.running("w") == []
    assert svc.delivery.labels(mine) is None
    svc.catalog.objects.set_query_status(sc, "w", "stopped")
    with pytest.raises(Conflict) as err:  # the gate outlives the diagram: no new variant
        route(joe, "w_out", True)
    assert err.value.code == "VARIANT_ENDED" and runtime.deployed == {}


def test_a_variant_without_subscribers_lingers_then_stops(world):
    svc, joe, sc, plan = world
    deployed_plan(svc.catalog, _diagram(svc), DOC, plan, sc)
    svc.runtime = runtime = FakeRuntime()
    (resumable,) = svc.catalog.objects.resumable()
    stored = svc.catalog.rewrites.of(_diagram(svc))
    labels = Labels.of(plan, resumable.sources)
    gate = svc.variants.gate(resumable, DOC, plan, stored.document)
    svc.delivery.register(plan.outputs, labels, None, gate)
    # a subscriber holds SUBSCRIBE, as the socket's subscribe requires: delivery re-checks it
    svc.catalog.grants.grant(sc, "ADMIN", "SUBSCRIBE", "output", "w_out")
    svc.delivery.subscribe("joe-socket", joe, "w_out")
    (variant,) = runtime.deployed
    svc.variants.linger = 0.5
    svc.delivery.unsubscribe("joe-socket", "w_out")
    svc.delivery.subscribe("joe-socket", joe, "w_out")  # back within the linger: kept
    assert not runtime.gone.wait(1.5) and svc.variants.running("w") == [variant]
    svc.delivery.forget("joe-socket")  # the socket went away
    assert runtime.gone.wait(30) and runtime.removed == [variant]
    assert svc.variants.running("w") == []


def test_a_start_deletes_the_variants_a_previous_run_left(world):
    svc, *_ = world
    runtime = FakeRuntime(disk=["w", "w.v-0123456789abcdef"])
    svc.variants.clear_left_over(runtime)
    assert runtime.removed == ["w.v-0123456789abcdef"]
