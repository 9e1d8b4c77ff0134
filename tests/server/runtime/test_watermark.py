"""A stream's time moves with its every tuple: a filter, before a window or on the window's
group key after it, keeps its rows but not the watermark (``boxes/input.py``); and an input
that gives its diagram no tuple does not hold the others' time back (``source.py``'s marks)."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import time
from datetime import datetime, timedelta, timezone

import pytest
from runtime_helpers import TRADE, Collector, at_level, plan_of, wait_until

from boxes.levels import Lattice

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


LATTICE = Lattice.of({"co": ["A", "B"]})


def union_count(level: str | None = None) -> dict:
    """Tuples of ``in1`` and ``in2`` counted in 2 s windows (at ``level`` if given)."""
    return {
        "version": 1,
        "name": "both",
        **({"level": {"co": level}} if level else {}),
        "inputs": {"in1": {}, "in2": {}},
        "boxes": {
            "merged": {"type": "union", "in": ["in1", "in2"]},
            "per": {
                "type": "aggregate",
                "in": "merged",
                "window": {"size": "2s"},
                "aggregates": {"n": "count()"},
            },
        },
        "outputs": {"both_out": {"from": "per"}},
    }


def counts(rows: list[dict]) -> list[tuple]:
    return sorted(((r["window_start"] - T0).seconds, r["n"]) for r in rows)


@pytest.mark.parametrize("level", [None, "A"], ids=["never-written", "above-the-level"])
def test_an_input_that_gives_nothing_does_not_hold_the_windows_back(make_runtime, level):
    """Spark takes the least of the inputs' watermarks, and an input without a tuple counts as
    time 0: ``in2``, never written or (at level {co: A}) only written at B's level, held every
    window open. Its marks carry the time of the tuples the diagram sees, never B's."""
    runtime = make_runtime(share_plans=False)
    for name in ("in1", "in2"):
        runtime.create_stream(name, TRADE)
    plan = plan_of(union_count(level))
    if level:
        plan = dataclasses.replace(plan, clearance=LATTICE.clearance((level,)))
        runtime.append("in2", [trade("b", 0), trade("b", 30)], at_level(LATTICE.company_mask("B")))
    got = Collector()
    runtime.deploy("both", plan, got)
    a = at_level(LATTICE.company_mask("A"))
    runtime.append("in1", [trade("a", 1), trade("a", 3)], a)
    runtime.append("in1", [trade("a", 10)], a)  # closes the windows before 10 s
    assert counts(got.wait_for_rows(2)) == [(0, 1), (2, 1)]


def test_an_input_that_spoke_and_went_idle_does_not_hold_the_windows_back(make_runtime):
    """``in2`` speaks once (at 1 s) and stops: its watermark would stay at 1 s and hold every
    window after it open. Idle for ``idle_seconds``, it is quiet again and marked at the time
    of ``in1``'s tuples, so ``in1``'s windows close (Flink's idle sources)."""
    runtime = make_runtime(share_plans=False, idle_seconds=1)
    for name in ("in1", "in2"):
        runtime.create_stream(name, TRADE)
    got = Collector()
    runtime.deploy("both", plan_of(union_count()), got)
    runtime.append("in2", [trade("b", 1)])
    runtime.append("in1", [trade("a", 2), trade("a", 3)])
    deadline = time.monotonic() + 60
    for second in itertools.count(10, 2):  # in1 goes on while in2 turns idle
        runtime.append("in1", [trade("a", second)])
        with contextlib.suppress(AssertionError):
            got.wait_for_rows(2, timeout=1.0)  # poll: idleness is wall-clock time
            break
        assert time.monotonic() < deadline, f"no window closed: {got.rows}"
    assert counts(got.rows)[:2] == [(0, 1), (2, 2)]
