"""The system's status for administrators, from a live server with the Spark runtime."""

from __future__ import annotations

from serverkit import PASSWORD, Client, wait_until


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


def copy(name: str) -> dict:
    """A diagram the same as every other copy but for its names."""
    return {
        "version": 1,
        "name": name,
        "inputs": {"in1": {}},
        "boxes": {f"{name}_kept": {"type": "filter", "in": "in1", "where": "x > 0"}},
        "outputs": {f"{name}_out": {"from": f"{name}_kept"}},
    }


def test_an_administrator_sees_which_diagrams_share_one_execution(live):
    joe = Client(live.url, "joe", PASSWORD)
    joe.call("POST", "/schemas", 201, json={"name": "s", "fields": {"x": "long"}})
    joe.call("POST", "/streams", 201, json={"name": "in1", "schema": "s"})
    for name in ("first", "second"):
        joe.call("POST", "/diagrams", 201, json={"document": copy(name)})
        joe.call("POST", f"/diagrams/{name}/deploy")
    (group,) = joe.call("GET", "/system/status")["runtime"]["shared"]
    assert [m["diagram"] for m in group["members"]] == ["first", "second"]
    assert {m["state"] for m in group["members"]} == {group["state"]} == {"running"}
    joe.call("POST", "/streams/in1/tuples", json=[{"x": 0}, {"x": 7}, {"x": 9}])

    def logged(output: str) -> list[int]:
        return [t["x"] for t in joe.call("GET", f"/outputs/{output}/results?from=0")["tuples"]]

    wait_until(lambda: len(logged("second_out")) == 2, 120, "the second copy's results")
    assert logged("first_out") == logged("second_out") == [7, 9]
    joe.call("POST", "/diagrams/first/stop")
    (group,) = joe.call("GET", "/system/status")["runtime"]["shared"]
    states = {m["diagram"]: m["state"] for m in group["members"]}
    assert states == {"first": "stopped", "second": "running"} and group["state"] == "running"
