"""Seed 002's subjects in ``sluice serve --demo`` (``server/cli/port_demo.py``): a port
authority and a ship company, their policies and attributes, seeded once into a demo data
directory (also one made before them)."""

from __future__ import annotations

import functools
import json

import pytest
from serverkit import overrides

from catalog.bootstrap import DEMO_USERS
from server.app import close_app, create_app
from server.cli import demo, port_demo
from server.cli.ais_demo import Traffic


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
