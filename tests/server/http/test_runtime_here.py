"""Whether the runtime is here (server/ingest/here.py): one snapshot a caller takes once, so the
lease thread taking the runtime away mid-request cannot hand the rest of the request a None."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from boxes.errors import Unavailable
from server.ingest.here import here

API = "/api/v1"
RUNTIME = object()


class Lease:
    def __init__(self, valid: bool) -> None:
        self._valid = valid

    def valid(self) -> bool:
        return self._valid


@pytest.mark.parametrize(
    "runtime, lease, elsewhere, serves",
    [
        (RUNTIME, Lease(True), False, True),  # the holder
        (RUNTIME, None, False, True),  # a runtime handed over without a lease (tests)
        (None, Lease(True), False, False),  # the holder, its runtime starting
        (None, Lease(False), True, False),  # a standby
        (RUNTIME, Lease(False), True, False),  # a holder cut off past its lease's end
        (None, None, True, False),  # configured without the runtime
    ],
)
def test_each_state_gives_its_one_answer(runtime, lease, elsewhere, serves):
    """``needed`` hands out only a runtime whose lease holds; ``unless_standby`` refuses only
    on a standby; ``runtime`` is whatever this process runs."""
    now = here(SimpleNamespace(runtime=runtime, lease=lease))
    assert now.runtime is runtime and now.elsewhere is elsewhere
    if serves:
        assert now.needed() is runtime
    else:
        with pytest.raises(Unavailable) as refused:
            now.needed()
        assert refused.value.code == "RUNTIME_UNAVAILABLE"
    if lease is not None and not lease.valid():
        with pytest.raises(Unavailable):
            now.unless_standby()
    else:
        assert now.unless_standby() is runtime


class Leaving:
    """A runtime the lease takes away (``stop_runtime``) while it answers for a status."""

    def __init__(self, svc) -> None:
        self.svc = svc
        self.planned: list[str] = []

    def status(self, name: str) -> dict:
        self.svc.runtime = None
        return {"outputs": {}, "boxes": {}, "error": None}

    def given_up(self, name: str) -> bool:
        return False

    def plan(self, name: str) -> None:
        self.planned.append(name)


def test_a_status_read_while_the_lease_takes_the_runtime_away_uses_the_one_it_began_with(
    app, client, auth
):
    svc = app.extensions["sluice"]
    svc.runtime = leaving = Leaving(svc)
    answer = client.get(f"{API}/diagrams/q1/status", headers=auth.headers("ed"))
    assert answer.status_code == 200, answer.json
    assert answer.json["progress"]["withheld"] == [] and leaving.planned == ["q1"]
