"""Derived streams on the runtime: a diagram reads another's output through its result log.

``up`` unions streams a and z; ``down`` filters ``up``'s output and unions stream m in. Every
tuple ``down`` takes from ``up`` names the same source streams it named there, each arrives
once, and a restart of the runtime (both diagrams resumed from their checkpoints) neither
loses nor repeats one: with the state in the runtime's directory, by a ``file://`` URL, and with
the result logs on S3 (moto's server; the checkpoints stay local, since this Spark has no s3a).
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from runtime_helpers import TRADE, Collector, plan_of, read_results, union_doc

from boxes.document import validate
from boxes.errors import Conflict
from boxes.input import Derived
from boxes.secfilter import label_sources
from server.runtime import Runtime, RuntimeSettings, overlap, sharing

DOWN = {
    "version": 1,
    "name": "down",
    "inputs": {"d": {"output": "up_out"}, "m": {}},
    "boxes": {
        "cheap": {"type": "filter", "in": "d", "where": "price < 100"},
        "all": {"type": "union", "in": ["cheap", "m"]},
    },
    "outputs": {"down_out": {"from": "all"}},
}
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def trade(symbol: str, price: float) -> dict:
    return {"time": T0.isoformat(), "symbol": symbol, "price": price}


def plans():
    up = plan_of(union_doc("up", ["a", "z"]))
    derived = {"up_out": Derived(up.outputs["up_out"], up.label_sources)}
    return up, validate(DOWN, {"m": TRADE}, derived)


def sources_of(plan, rows: list[dict]) -> dict[str, list[str]]:
    import pyarrow as pa

    table = pa.Table.from_pylist(rows)
    return dict(
        zip(table["symbol"].to_pylist(), label_sources(table, plan.label_sources), strict=True)
    )


@pytest.fixture(params=["default", "urls"])
def places(request, tmp_path) -> dict:
    """Where the state lives (``RuntimeSettings.state_url``, ``results_url``): the runtime
    directory, or checkpoints at a ``file://`` URL with the result logs on an object store
    (one run for both: each alone is a storage test's parameter too)."""
    if request.param == "urls":
        return {
            "state_url": f"file://{tmp_path}/state",
            "results_url": request.getfixturevalue("s3_url"),
        }
    return {}


def open_runtime(spark, path, places: dict) -> Runtime:
    return Runtime(path, session=spark, settings=RuntimeSettings(compact_every=3600, **places))


def test_derived_tuples_keep_their_sources_and_arrive_once_across_a_restart(
    spark, tmp_path, places
):
    up, down = plans()
    runtime = open_runtime(spark, tmp_path / "rt", places)
    try:
        for name in ("a", "z", "m"):
            runtime.create_stream(name, TRADE)
        with pytest.raises(Conflict) as refused:  # its upstream is not deployed yet
            runtime.deploy("down", down, Collector())
        assert refused.value.code == "DERIVED_NOT_DEPLOYED"
        upstream, downstream = Collector(), Collector()
        runtime.deploy("up", up, upstream)
        runtime.deploy("down", down, downstream)
        runtime.append("a", [trade("a1", 1.0), trade("a2", 500.0)])
        runtime.append("z", [trade("z1", 2.0)])
        runtime.append("m", [trade("m1", 3.0)])
        up_sources = sources_of(up, upstream.wait_for_rows(3))
        assert up_sources == {"a1": ["a"], "a2": ["a"], "z1": ["z"]}
        got = sources_of(down, downstream.wait_for_rows(3))
        assert got == {"a1": ["a"], "z1": ["z"], "m1": ["m"]}
    finally:
        runtime.close()

    runtime = open_runtime(spark, tmp_path / "rt", places)  # a restart: from the checkpoints
    try:
        upstream, downstream = Collector(), Collector()
        runtime.deploy("up", up, upstream)
        runtime.append("z", [trade("z2", 4.0)])  # read by down once it is back
        upstream.wait_for_rows(1)
        runtime.deploy("down", down, downstream)
        runtime.append("a", [trade("a3", 5.0)])
        got = sources_of(down, downstream.wait_for_rows(2))
        assert got == {"z2": ["z"], "a3": ["a"]}
        directory = runtime.result_logs.directory("up_out")
        assert directory is not None and directory.local == ("results_url" not in places)
        key, _, residual = overlap.placement(down)
        host = runtime._registry.get(sharing.HOST + key)  # down's execution
        assert host.directory.checkpoint(host.plan.boxes[-1].name).path.startswith(f"{tmp_path}/")
        assert residual is not None  # it runs its prefix: its rows are its filters' log's
        results = host.directory.residual_results(residual.name)
        logged = [s for _, t in read_results(results) for s in t["symbol"].to_pylist()]
        assert sorted(logged) == ["a1", "a3", "m1", "z1", "z2"]  # each exactly once
    finally:
        runtime.close()
