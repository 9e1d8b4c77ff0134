"""The Chinese Wall of ``sluice serve --demo`` (``server/cli/level_demo.py``): seeded once, also
into a demo data directory made before it, with cora cleared for bank A and oil company X."""

from __future__ import annotations

import functools
import json

import pytest
from serverkit import overrides

from catalog.bootstrap import DEMO_USERS
from server.app import close_app, create_app
from server.cli import demo, level_demo


def test_the_wall_is_seeded_once_with_its_classes_stream_and_clearances(tmp_path):
    app = create_app(overrides(tmp_path))
    svc = app.extensions["sluice"]
    try:
        old = demo._logins(svc)
        logins = level_demo.seed(svc, old, functools.partial(demo._keep, svc))
        kept = json.loads((tmp_path / demo.LOGINS).read_text())
        assert kept == logins and set(logins) == set(DEMO_USERS) | {"cora"}
        assert level_demo.seed(svc, kept, pytest.fail) == kept  # started again: nothing new
        _, joe = svc.catalog.sessions.login("joe", logins["joe"])
        config = svc.catalog.levels.configuration(joe)
        assert {c["name"]: c["companies"] for c in config["classes"]} == {
            "banks": ["A", "B"],
            "oil": ["X", "Y"],
        }
        assert config["streams"] == {"advice": {"multilevel": True}}
        assert config["clearances"] == {
            "CONSULTANT": {"banks": "A", "oil": "X"},
            "INFO_PROVIDER": {"banks": "T", "oil": "T"},
        }
        # every piece of advice states a level of the wall's companies, or public
        levels = [t["_level"] for t in level_demo.AdviceFeed(svc, logins["ed"]).batch()]
        assert levels == [{"banks": "A"}, {"banks": "B"}, {"oil": "X"}, {"oil": "Y"}, {}]
    finally:
        close_app(app)
