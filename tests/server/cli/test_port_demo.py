"""Seed 002's subjects in ``sluice serve --demo`` (``server/cli/port_demo.py``): a port
authority and a ship company, their policies and attributes, seeded once into a demo data
directory (also one made before them)."""

from __future__ import annotations

import functools
import json

import pytest
from serverkit import Client, LiveServer, overrides, wait_until

from catalog.bootstrap import DEMO_USERS, seed_demo
from server.app import close_app, create_app
from server.cli import demo, port_demo
from server.cli.ais_demo import Traffic
from server.control.diagrams import start_runtime
from server.runtime import Runtime


def test_the_port_part_is_seeded_once_with_its_policies_and_attributes(tmp_path):
    app = create_app(overrides(tmp_path))
    svc = app.extensions["sluice"]
    try:
        old = demo._logins(svc)
        demo._seed_ais(svc, old["joe"])
        logins = port_demo.seed(svc, old, functools.partial(demo._keep, svc))
        kept = json.loads((tmp_path / demo.LOGINS).read_text())
        assert kept == logins and set(logins) == set(DEMO_USERS) | {"pat", "sam"}
        assert port_demo.seed(svc, kept, pytest.fail) == kept  # started again: nothing new
        snapshot = svc.catalog.core.snapshot
        attributes = {
            user: dict(snapshot.attributes[snapshot.users_by_name[user].id])
            for user in ("pat", "sam")
        }
        assert attributes["pat"]["west"] == port_demo.PORT_WATERS["west"]
        company, ships = port_demo.fleet()
        assert attributes["sam"] == {"company": company, "ships": ships}
        # the company owns ships the feed really sends, and others own the rest
        sent = {ship.mmsi for ship in Traffic().ships}
        assert set(ships) < sent
        assert {p.name for p in snapshot.policies} >= {"port-waters", "own-ships"}
    finally:
        close_app(app)


@pytest.fixture
def strait(tmp_path, spark):
    """A server seeded as the demo seeds it (the paper's users, the AIS streams, the port
    part), with the suite's SparkSession; pat deploys ``strait`` and shares it."""
    app = create_app(overrides(tmp_path))
    svc = app.extensions["sluice"]
    logins = seed_demo(svc.catalog)
    demo._seed_ais(svc, logins["joe"])
    logins = port_demo.seed(svc, logins, lambda _: None)
    start_runtime(svc, Runtime(tmp_path / "runtime", session=spark))
    server = LiveServer(app)
    server.logins = logins
    pat = Client(server.url, "pat", logins["pat"])
    pat.call("POST", "/diagrams", 201, json={"document": port_demo.STRAIT})
    pat.call("POST", "/diagrams/strait/deploy", timeout=180)
    port_demo.share(svc, logins["pat"])
    pat.close()
    yield server
    server.stop()
    close_app(app)


def test_the_port_authority_and_the_ship_company_watch_one_diagram(strait):
    """The demo's must-show of seed 002: pat and sam on ``ships``, the one output of pat's
    diagram; each receives exactly what its own policies allow of the same traffic."""
    logins = strait.logins
    pat, sam, ed = (Client(strait.url, u, logins[u]) for u in ("pat", "sam", "ed"))
    for client in (pat, sam):
        client.connect(resubscribe=[port_demo.OUTPUT])
    wait_until(lambda: pat.sock.connected and sam.sock.connected, 60, "both subscribed")
    traffic = Traffic(pace=30.0)
    _, ships = port_demo.fleet()
    b = port_demo.PORT_WATERS
    sent: list[dict] = []
    for _ in range(5):
        lines = traffic.tick(1)
        ed.call(
            "POST",
            "/streams/ais/tuples",
            data="\n".join(lines).encode(),
            headers={"Content-Type": "text/x-nmea"},
        )
        sent += [{"mmsi": s.mmsi, "position": s.position()[:2]} for s in traffic.ships]

    def inside(lon: float, lat: float, margin: float = 0.0) -> bool:
        return (
            b["west"] - margin <= lon <= b["east"] + margin
            and b["south"] - margin <= lat <= b["north"] + margin
        )

    # NMEA rounds positions (1/10,000 of a minute): ships within a hair of the box's edge may
    # fall either way, so the port's ships are known up to them
    surely = {t["mmsi"] for t in sent if inside(*t["position"], -1e-3)}
    maybe = {t["mmsi"] for t in sent if inside(*t["position"], 1e-3)}
    assert surely and ships

    def each_sees_its_own() -> bool:
        seen = {t["mmsi"] for t in pat.received}
        return surely <= seen <= maybe and {t["mmsi"] for t in sam.received} == set(ships)

    wait_until(each_sees_its_own, 180, "each reader's own ships")
    assert all(inside(t["lon"], t["lat"]) for t in pat.received)
    for client in (pat, sam, ed):
        client.close()
