"""Fixtures shared by the whole suite: one real SparkSession for every test that needs Spark."""

from __future__ import annotations

import shutil

import pytest


@pytest.fixture(scope="session")
def spark():
    """The suite's one local SparkSession (starting one costs 10-15 s; never start two)."""
    if shutil.which("java") is None:
        pytest.fail(
            "Java 17 is required for Spark tests: sudo apt-get install -y openjdk-17-jre-headless"
        )
    from server.runtime.spark import build_session

    session = build_session("local[2]")
    yield session
    for query in session.streams.active:
        query.stop()
    session.stop()
