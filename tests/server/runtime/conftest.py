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
