"""A stream's time moves with its every tuple: a filter, before a window or on the window's
group key after it, keeps its rows but not the watermark (``boxes/input.py``)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from runtime_helpers import TRADE, Collector, plan_of, wait_until

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
WHERE = "symbol = 'ibm'"


def counted(filter_first: bool) -> dict:
    """Per-symbol counts of ``in1`` in 10 s windows, only IBM's kept: filtered before the
    window, or its results filtered after it."""
    per = {
        "type": "aggregate",
        "window": {"size": "10s"},
        "group_by": ["symbol"],
        "aggregates": {"n": "count()"},
    }
    if filter_first:
        boxes = {
            "kept": {"type": "filter", "in": "in1", "where": WHERE},
            "per": {**per, "in": "kept"},
        }
        last = "per"
    else:
        boxes = {
            "per": {**per, "in": "in1"},
            "kept": {"type": "filter", "in": "per", "where": WHERE},
        }
        last = "kept"
    return {
        "version": 1,
        "name": "ibm",
        "inputs": {"in1": {}},
        "boxes": boxes,
        "outputs": {"ibm_out": {"from": last}},
    }


def trade(symbol: str, second: int) -> dict:
    return {"time": (T0 + timedelta(seconds=second)).isoformat(), "symbol": symbol, "price": 1.0}


@pytest.mark.parametrize("filter_first", [True, False], ids=["filter-window", "window-filter"])
def test_tuples_a_filter_drops_still_close_the_windows_it_keeps(make_runtime, filter_first):
    """Catalyst would push the filter below the watermark, which would then move only with
    IBM's tuples: its window of 0-10 s would wait for IBM's next tuple. Every tuple of the
    stream is its time, as it is when the filter runs on a shared window's results."""
    runtime = make_runtime(share_plans=False)
    runtime.create_stream("in1", TRADE)
    got = Collector()
    runtime.deploy("ibm", plan_of(counted(filter_first)), got)
    runtime.append("in1", [trade("ibm", 1), trade("ibm", 5), trade("sun", 12)])
    runtime.append("in1", [trade("hp", 30)])  # every window before 30 s is closed
    wait_until(lambda: got.rows, what="IBM's window of 0-10 s")
    assert [(r["window_start"], r["symbol"], r["n"]) for r in got.rows] == [(T0, "ibm", 2)]
