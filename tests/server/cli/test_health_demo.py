"""The demo's health monitoring (seed 003): the scenario seeded once, also into a demo data
directory made before it, and its feed on a live server (real Spark, HTTP, socket.io): the
provider's policy changes mid-stream and the nurse stops receiving the readings the doctor
and the cardiologist still receive, each told the policy's roles before its rows."""

from __future__ import annotations

import functools
import json

import pytest
from serverkit import Client, LiveServer, overrides, wait_until

from catalog import ObjectType
from catalog.bootstrap import DEMO_USERS, seed_demo
from server.app import close_app, create_app
from server.cli import demo, health_demo
from server.cli.health_demo import OUTPUT, HealthFeed
from server.control.diagrams import start_runtime
from server.runtime import Runtime


def test_the_health_part_is_seeded_once_and_kept_with_the_demo_logins(tmp_path):
    app = create_app(overrides(tmp_path))
    svc = app.extensions["sluice"]
    try:
        old = demo._logins(svc)  # a demo data directory from before the health part
        assert set(old) == set(DEMO_USERS)
        logins = health_demo.seed(svc, old, functools.partial(demo._keep, svc))
        kept = json.loads((tmp_path / demo.LOGINS).read_text())
        assert kept == logins and logins.items() >= old.items()
        assert set(logins) == set(DEMO_USERS) | {"dora", "nina", "carl"}
        assert (tmp_path / demo.LOGINS).stat().st_mode & 0o777 == 0o600
        # started again: nothing is added, nothing kept anew
        assert health_demo.seed(svc, kept, pytest.fail) == kept
        snapshot = svc.catalog.core.snapshot
        for stream in health_demo.STREAMS:
            assert snapshot.governed[snapshot.find(ObjectType.STREAM, stream).id] == "patient"
        for user, role in health_demo.USERS.items():
            _, who = svc.catalog.sessions.login(user, kept[user])
            assert who.roles == {role}
    finally:
        close_app(app)


@pytest.fixture
def ward(tmp_path, spark):
    """A server seeded as the demo seeds it (the paper's users, then the health part), with
    the suite's SparkSession; joe deploys ``vitals`` over the API."""
    app = create_app(overrides(tmp_path))
    svc = app.extensions["sluice"]
    logins = health_demo.seed(svc, seed_demo(svc.catalog), lambda _: None)
    start_runtime(svc, Runtime(tmp_path / "runtime", session=spark))
    server = LiveServer(app)
    server.logins = logins
    Client(server.url, "joe", logins["joe"]).call("POST", "/diagrams/vitals/deploy")
    yield server
    server.stop()
    close_app(app)


def test_the_nurses_view_stops_at_the_policy_change_while_the_doctors_continues(ward):
    users = {role: user for user, role in health_demo.USERS.items()}
    clients = {role: Client(ward.url, user, ward.logins[user]) for role, user in users.items()}
    told: dict[str, list] = {role: [] for role in clients}  # each policy event, rows before it
    for role, client in clients.items():
        client.connect()
        client.sock.on("policy", lambda d, r=role, c=client: told[r].append((d, len(c.received))))
        assert client.emit("subscribe", {"output": OUTPUT}) == {"subscribed": OUTPUT}
    feed = HealthFeed(ward.app.extensions["sluice"], ward.logins["ed"], period=0.25, cycle=4)
    feed.start()
    try:

        def seen(role: str) -> set[tuple[int, str, str]]:
            """(turn, policy, vital) of each reading the role's user received."""
            return {(*feed.policy_at(t["time"]), t["vital"]) for t in clients[role].received}

        def wait_for(role: str, policy: str, vital: str) -> None:
            wait_until(
                lambda: any(p == policy and v == vital for _, p, v in seen(role)),
                180,
                f"a {vital} reading under {policy!r} to reach the {role.lower()}",
            )

        wait_for("NURSE", "ward round", "heart rate")
        wait_for("DOCTOR", "doctors only", "heart rate")
        wait_for("CARDIOLOGIST", "doctors only", "heart rate")
        wait_for("CARDIOLOGIST", "cardiac watch", "heart rate")
        wait_for("DOCTOR", "cardiac watch", "temperature")
        # the next cycle: the nurse's view comes back with the ward round
        wait_until(lambda: len({t for t, _, _ in seen("NURSE")}) > 1, 180, "the next round")
    finally:
        feed.stop()
    # From the policy change on, the nurse received nothing until the ward round came again,
    # while the doctor went on receiving heart rates.
    assert {p for _, p, _ in seen("NURSE")} == {"ward round"}
    first, again = sorted({t for t, _, _ in seen("NURSE")})[:2]
    assert any(first < t < again and v == "heart rate" for t, _, v in seen("DOCTOR"))
    # Each saw exactly what each policy of POLICIES grants its role, nothing else.
    streams = {"heart rate": "HeartRate", "temperature": "BodyTemperature"}
    for role in clients:
        for _, name, vital in seen(role):
            assert any(role in group for group in health_demo.POLICIES[name][streams[vital]])
    assert {v for _, p, v in seen("DOCTOR") if p == "cardiac watch"} == {"temperature"}
    assert {v for _, p, v in seen("CARDIOLOGIST") if p != "ward round"} == {"heart rate"}
    # Each heard the policy before its first row, naming its own role only; it is not sent
    # again while the roles it grants that subscriber stay the same.
    for role in clients:
        assert told[role] == [({"output": OUTPUT, "roles": [role]}, 0)]
    assert all("_sp_denied" not in t for c in clients.values() for t in c.received)
    for client in clients.values():
        client.close()
