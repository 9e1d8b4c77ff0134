"""A batch Spark replays after a crash, whose results were logged before Spark recorded its
commit: its results are not delivered again, and its windows' state is still kept."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from runtime_helpers import TRADE, Collector, plan_of, wait_until

from server.runtime import Runtime, RuntimeSettings

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
COUNTS = {
    "version": 1,
    "name": "per",
    "inputs": {"in1": {}},
    "boxes": {
        "n": {
            "type": "aggregate",
            "in": "in1",
            "window": {"size": "10s"},
            "group_by": ["symbol"],
            "aggregates": {"n": "count()"},
        }
    },
    "outputs": {"per_out": {"from": "n"}},
}


def trade(symbol: str, second: int) -> dict:
    return {"time": (T0 + timedelta(seconds=second)).isoformat(), "symbol": symbol, "price": 1.0}


def windows(rows: list[dict]) -> list[tuple]:
    return sorted((r["window_start"], r["symbol"], r["n"]) for r in rows)


def at(second: int) -> datetime:
    return T0 + timedelta(seconds=second)


@pytest.mark.parametrize("share", [False, True], ids=["alone", "shared"])
def test_a_replayed_batch_already_logged_still_keeps_its_windows_state(spark, tmp_path, share):
    """Its results are skipped, but its stateful operators must still run: Spark commits the
    batch's state only when the batch is executed (and Spark 4 refuses the batch otherwise,
    ``STATE_STORE_COMMIT_VALIDATION_FAILED``)."""
    settings = RuntimeSettings(compact_every=3600, share_plans=share)
    runtime = Runtime(tmp_path / "rt", session=spark, settings=settings)
    try:
        runtime.create_stream("in1", TRADE)
        before = Collector()
        runtime.deploy("per", plan_of(COUNTS), before)
        runtime.append("in1", [trade("ibm", 1), trade("ibm", 2), trade("hp", 15)])
        wait_until(lambda: before.rows, what="the window of 0-10 s")
    finally:
        runtime.close()
    assert windows(before.rows) == [(at(0), "ibm", 2)]
    # The last batch's results are logged, but its commit is lost: Spark replays it.
    (commits,) = {p.parent for p in (tmp_path / "rt").rglob("commits/*") if p.name.isdigit()}
    last = max(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    for lost in commits.glob(f"*{last}*"):
        lost.unlink()

    runtime = Runtime(tmp_path / "rt", session=spark, settings=settings)
    try:
        after = Collector()
        runtime.deploy("per", plan_of(COUNTS), after)
        runtime.append("in1", [trade("sun", 21), trade("ibm", 35)])
        wait_until(lambda: len(after.rows) >= 2, what="the windows of 10-20 s and 20-30 s")
        assert windows(after.rows) == [(at(10), "hp", 1), (at(20), "sun", 1)]
        status = runtime.status("per")
        assert (status["state"], status["restarts"]) == ("running", 0), status
    finally:
        runtime.close()
