"""A deployment's state moves only as ``states.MOVES`` says: every move not in the table is
refused, every one in it has its declared effect, and a host's move carries its members."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import pytest

from server.runtime.deployment import Deployment, Membership
from server.runtime.registry import Registry
from server.runtime.states import (
    FAILED,
    MOVES,
    RUNNING,
    STARTING,
    STOPPED,
    Error,
    IllegalMove,
    Outcome,
    State,
    move,
)

LEGAL = {
    (STARTING, RUNNING),
    (STARTING, FAILED),
    (STARTING, STOPPED),
    (RUNNING, RUNNING),
    (RUNNING, FAILED),
    (RUNNING, STOPPED),
    (FAILED, STARTING),
    (FAILED, RUNNING),
    (FAILED, FAILED),
    (FAILED, STOPPED),
    (STOPPED, RUNNING),
    (STOPPED, STOPPED),
}
PAIRS = list(itertools.product(State, State))


def test_the_table_holds_exactly_the_legal_moves():
    assert set(MOVES) == LEGAL
    assert {p for p in PAIRS if p not in LEGAL} == {
        (STARTING, STARTING),
        (RUNNING, STARTING),
        (STOPPED, STARTING),
        (STOPPED, FAILED),
    }


@pytest.mark.parametrize("old,new", [p for p in PAIRS if p not in LEGAL], ids=str)
def test_every_illegal_move_is_refused(old, new):
    for error in (None, "why"):
        with pytest.raises(IllegalMove, match=f"cannot go from {old} to {new}"):
            move("d", Outcome(old, "before", "out"), new, error)


@pytest.mark.parametrize("old,new", sorted(LEGAL), ids=str)
def test_every_legal_move_has_its_declared_effect(old, new):
    before = Outcome(old, "before", "out")
    effect = MOVES[old, new].error
    given = move("d", before, new, "why")
    if effect is Error.CLEARED:
        assert given == move("d", before, new) == Outcome(new, None, None)
    elif effect is Error.SET:
        assert given == Outcome(new, "why", "out")
        with pytest.raises(IllegalMove):  # a failure says why
            move("d", before, new)
    else:
        assert given == Outcome(new, "why", "out")
        assert move("d", before, new) == Outcome(new, "before", "out")


def deployment(diagram_id: str, state: State, host: str | None = None, joined=True):
    member = None
    if host is not None:
        member = Membership(host, {}, SimpleNamespace(), bases={} if joined else None)
    plan = SimpleNamespace(outputs={})
    return Deployment(diagram_id, "v", plan, None, member=member, state=state)


def registered(*deployments: Deployment) -> Registry:
    registry = Registry()
    for d in deployments:
        registry._deployments[d.diagram_id] = d
    return registry


def test_a_hosts_move_carries_its_joined_members_but_not_those_stopped_on_their_own():
    host = deployment("shared.k", RUNNING)
    host.restarts = 2
    running = deployment("a", RUNNING, host="shared.k")
    stopped = deployment("b", STOPPED, host="shared.k")
    waiting = deployment("c", STARTING, host="shared.k", joined=False)
    other = deployment("d", RUNNING, host="shared.other")
    registry = registered(host, running, stopped, waiting, other)
    registry.set_state(host, FAILED, "boom")
    assert (host.state, host.error) == (FAILED, "boom")
    assert (running.state, running.error, running.restarts) == (FAILED, "boom", 2)
    assert (stopped.state, stopped.error, stopped.restarts) == (STOPPED, None, 2)
    assert (waiting.state, waiting.restarts) == (STARTING, 0)  # not joined: not its host's
    assert (other.state, other.restarts) == (RUNNING, 0)


def test_a_refused_move_changes_nothing():
    host = deployment("shared.k", STOPPED)
    member = deployment("a", RUNNING, host="shared.k")
    registry = registered(host, member)
    with pytest.raises(IllegalMove):
        registry.set_state(host, FAILED, "boom")
    assert (host.state, member.state) == (STOPPED, RUNNING)


def test_running_clears_the_failed_output():
    failed = deployment("a", FAILED)
    failed.error, failed.failed_output = "boom", "a_out"
    registered(failed).set_state(failed, STARTING)
    assert (failed.error, failed.failed_output) == ("boom", "a_out")
    registered(failed).set_state(failed, RUNNING)
    assert (failed.error, failed.failed_output) == (None, None)
