"""The demo server the fuzz tests share, for this folder only: an idle demo keeps about half a
core busy (its feeds and q1's batches), which every later test of the session would pay."""

from __future__ import annotations

import json

import pytest
from serverkit import Server


@pytest.fixture(scope="package")
def demo_server(tmp_path_factory):
    """``sluice serve --demo`` (the paper's users, roles, streams and running q1, Spark
    included), shared by the fuzz tests and stopped after them; login throttling is set out of
    their way."""
    server = Server(tmp_path_factory.mktemp("demo"), demo=True, login_attempts_per_minute=1_000_000)
    server.start()
    server.logins = json.loads((server.data / "demo_logins.json").read_text())
    yield server
    server.kill()
