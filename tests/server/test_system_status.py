"""The system's status for administrators, from a live server with the Spark runtime."""

from __future__ import annotations

from serverkit import PASSWORD, Client


def test_an_administrator_sees_how_many_events_sparks_listener_bus_dropped(live):
    joe = Client(live.url, "joe", PASSWORD)
    bus = joe.call("GET", "/system/status")["runtime"]["listener_bus"]
    assert bus["events_posted"] > 0
    dropped = bus["dropped_events"]
    assert "appStatus" in dropped
    assert all(isinstance(count, int) and count >= 0 for count in dropped.values())


def test_an_administrator_sees_the_spark_driver_answering(live):
    joe = Client(live.url, "joe", PASSWORD)
    driver = joe.call("GET", "/system/status")["runtime"]["driver"]
    assert driver["alive"] is True
    assert driver["restarts"] == 0
