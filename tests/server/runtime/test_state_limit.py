"""A diagram whose state outgrows ``max_state_rows`` is stopped before it can take the driver
down (issue 12: the cost estimate cannot know how many group keys the data brings)."""

from __future__ import annotations

from runtime_helpers import TRADE, Collector, plan_of, union_doc, wait_until

KEYS = 40


def per_symbol(name: str, stream: str) -> dict:
    """Average price per symbol in 10-second windows: one state row per symbol and window."""
    return {
        "version": 1,
        "name": name,
        "inputs": {stream: {}},
        "boxes": {
            "avg": {
                "type": "aggregate",
                "in": stream,
                "window": {"size": "10s", "slide": "10s"},
                "group_by": ["symbol"],
                "aggregates": {"avg_price": "avg(price)"},
            }
        },
        "outputs": {f"{name}_out": {"from": "avg"}},
    }


def trades(symbols: int, second: int = 0) -> list[dict]:
    return [
        {"time": f"2024-01-01T00:00:{second:02d}Z", "symbol": f"s{i}", "price": 1.0}
        for i in range(symbols)
    ]


def test_a_diagram_over_the_state_limit_is_stopped_and_the_others_run_on(runtime):
    runtime.create_stream("keys_in", TRADE)
    runtime.create_stream("other_in", TRADE)
    runtime.set_max_state_rows(KEYS // 2)
    runtime.deploy("keys", plan_of(per_symbol("keys", "keys_in")))
    rows = Collector()
    runtime.deploy("other", plan_of(union_doc("other", ["other_in"])), rows)

    runtime.append("keys_in", trades(KEYS))
    status = wait_until(
        lambda: (s := runtime.status("keys"))["state"] == "failed" and s,
        what="the diagram to be stopped",
    )
    assert status["error"].startswith("[STATE_LIMIT_EXCEEDED]")
    assert f"holds {KEYS} rows of state, over the limit of {KEYS // 2}" in status["error"]
    assert status["restarts"] == 0  # its checkpoint holds the same state: not retried

    runtime.append("other_in", trades(1))
    rows.wait_for_rows(1)
    assert runtime.status("other")["state"] == "running"


def test_a_diagram_within_the_state_limit_runs_and_reports_its_state(runtime):
    runtime.create_stream("few_in", TRADE)
    runtime.set_max_state_rows(KEYS)
    runtime.deploy("few", plan_of(per_symbol("few", "few_in")))
    runtime.append("few_in", trades(KEYS))
    status = wait_until(
        lambda: (s := runtime.status("few"))["outputs"]["few_out"]["state_rows"] == KEYS and s,
        what="the state to be reported",
    )
    assert status["state"] == "running"
