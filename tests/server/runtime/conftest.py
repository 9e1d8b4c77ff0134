"""A Runtime over the suite's one SparkSession."""

from __future__ import annotations

import pytest

from server.runtime import Runtime, RuntimeSettings


@pytest.fixture
def runtime(spark, tmp_path):
    rt = Runtime(tmp_path / "rt", session=spark, settings=RuntimeSettings(compact_every=3600))
    yield rt
    rt.close()


@pytest.fixture
def make_runtime(spark, tmp_path):
    made = []

    def make(**settings) -> Runtime:
        made.append(
            Runtime(
                tmp_path / f"rt{len(made)}",
                session=spark,
                settings=RuntimeSettings(**{"compact_every": 3600, **settings}),
            )
        )
        return made[-1]

    yield make
    for runtime in made:
        runtime.close()


@pytest.fixture(params=["local", "s3"])
def results_place(request, tmp_path):
    """Where a result log lives: a local directory (a segment log) or a prefix on the suite's
    S3 endpoint (an object per batch)."""
    if request.param == "local":
        return tmp_path / "results"
    return request.getfixturevalue("s3_url")
