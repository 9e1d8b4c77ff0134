"""The runtime lease's keeper (server/control/lease.py) on a real catalog, without Spark: who
starts the runtime, who takes it over when its holder stops renewing, and a holder fenced off
when another took the lease."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import text

from catalog import Catalog
from server.control.lease import LEASE, RuntimeLease


class Switches:
    """The runtime's start and stop, as events a test can wait for."""

    def __init__(self) -> None:
        self.gained, self.lost = threading.Event(), threading.Event()

    def keeper(self, catalog: Catalog, holder: str, seconds: float = 1.0) -> RuntimeLease:
        return RuntimeLease(catalog, holder, seconds, self.gained.set, self.lost.set)


@pytest.fixture
def catalogs(tmp_path):
    """Two servers' catalogs on one database."""
    url = f"sqlite:///{tmp_path / 'catalog.db'}"
    opened = [Catalog.open(url, bcrypt_rounds=4) for _ in range(2)]
    yield opened
    for catalog in opened:
        catalog.close()


def test_the_first_server_runs_the_runtime_and_a_standby_takes_it_over(catalogs):
    one, two = Switches(), Switches()
    first = one.keeper(catalogs[0], "host:/a")
    assert first.begin() and one.gained.is_set() and first.valid()
    second = two.keeper(catalogs[1], "host:/b")
    try:
        assert not second.begin() and not two.gained.is_set() and not second.valid()
        first.stop()  # the first dies: it stops renewing, and never releases
        assert two.gained.wait(10), "the standby did not take the runtime over"
        assert second.valid()
        assert catalogs[0].leases.holder(LEASE).holder == "host:/b"
    finally:
        second.stop()
        second.release()
    assert catalogs[0].leases.holder(LEASE) is None  # released: nobody need wait for it


def test_a_server_restarted_on_its_data_directory_takes_its_lease_back_at_once(catalogs):
    switches = Switches()
    died = switches.keeper(catalogs[0], "host:/a", seconds=600)
    assert died.begin()
    died.stop()  # killed: the lease has ten minutes to run
    again = Switches().keeper(catalogs[1], "host:/a", seconds=600)
    try:
        assert again.begin()  # the same host and data directory: its own lease
    finally:
        again.stop()


def test_a_holder_that_finds_its_lease_taken_stops_its_runtime(catalogs):
    switches = Switches()
    holder = switches.keeper(catalogs[0], "host:/a")
    assert holder.begin()
    try:
        # another server took it (as if this one had been paused past its lease's end)
        with catalogs[1].core.store.transaction() as conn:
            conn.execute(
                text("UPDATE leases SET holder = 'host:/b', expires_at = expires_at + 600")
            )
        assert switches.lost.wait(10), "the fenced holder kept its runtime"
        assert not holder.valid()
    finally:
        holder.stop()


def test_a_holder_cut_off_from_the_catalog_keeps_the_runtime_only_while_its_lease_lasts(
    catalogs,
):
    """On its own clock, from before it asked: 0.8 of the lease, so it stops acknowledging
    tuples before the database lets anyone take the runtime over."""
    now = [0.0]
    switches = Switches()
    holder = RuntimeLease(
        catalogs[0], "host:/a", 600, switches.gained.set, switches.lost.set, lambda: now[0]
    )
    assert holder.begin()  # renewed at t=0; the next renewal is 200 s away
    try:
        catalogs[0].close()  # the catalog can no longer be reached
        now[0] = 400.0
        assert holder._take()  # a renewal fails, and the server keeps what it holds
        assert holder.valid()
        now[0] = 480.0  # 0.8 of 600 s
        assert not holder._take() and not holder.valid()
    finally:
        holder.stop()
