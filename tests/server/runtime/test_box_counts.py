"""Rows per box in the runtime's status (boxes/observed.py): counted from each batch's
observed metrics into totals since the deploy; none at all with ``box_metrics`` off (the
setting that saves their cost)."""

from __future__ import annotations

import pytest
from runtime_helpers import TRADE, WAIT, Collector, plan_of, union_doc
from serverkit import wait_until

from boxes import observed

COUNTED = {"a": (None, 3), "b": (None, 1), "merged": (4, 4), "kept": (4, 3), "out_out": (3, 3)}


def rows_of(status: dict) -> dict:
    return {name: (b["rows_in"], b["rows_out"]) for name, b in status["boxes"].items()}


@pytest.mark.parametrize("box_metrics", [True, False])
def test_each_box_counts_the_rows_through_it_unless_the_setting_is_off(
    make_runtime, spark, box_metrics
):
    runtime = make_runtime(box_metrics=box_metrics, share_plans=False)  # its query's name
    for stream in ("a", "b"):
        runtime.create_stream(stream, TRADE)
    rows = Collector()
    runtime.deploy("out", plan_of(union_doc("out", ["a", "b"], where="price > 1")), rows)
    runtime.append("a", [{"symbol": "x", "price": p} for p in (1.0, 2.0, 3.0)])
    runtime.append("b", [{"symbol": "y", "price": 5.0}])
    rows.wait_for_rows(3)
    query = next(q for q in spark.streams.active if q.name == "out.out_out")
    query.processAllAvailable()
    names = {n for p in query.recentProgress for n in p.observedMetrics}
    if box_metrics:
        # A union is not observed; its inputs, read as one scan, are counted in one metric.
        assert names == {observed.SCAN + "a", observed.PREFIX + "kept"}
        wait_until(lambda: rows_of(runtime.status("out")) == COUNTED, WAIT, "the counts")
    else:
        assert not {n for n in names if n.startswith(observed.PREFIX)}
        assert runtime.status("out")["boxes"] == {}
    runtime.stop("out")


def test_a_member_joining_a_prefix_host_counts_its_input_since_it_joined(make_runtime):
    """A filter over an input shares its prefix (the input) with an earlier diagram's; the
    later one's input shows the rows it read since it joined, as its filter's rows in do,
    not the host's since the host started (issue 39: input "out 50,400", filter "in 160")."""
    runtime = make_runtime(box_metrics=True)
    runtime.create_stream("a", TRADE)
    rows = {"early": Collector(), "late": Collector()}
    runtime.deploy("early", plan_of(union_doc("early", ["a"], where="price > 1")), rows["early"])
    runtime.append("a", [{"symbol": "x", "price": p} for p in (1.0, 2.0, 3.0)])
    rows["early"].wait_for_rows(2)
    runtime.deploy("late", plan_of(union_doc("late", ["a"], where="price > 4")), rows["late"])
    (execution,) = runtime.shared()
    assert execution["shares"] == "prefix"
    runtime.append("a", [{"symbol": "y", "price": p} for p in (4.0, 5.0)])
    rows["early"].wait_for_rows(4)
    rows["late"].wait_for_rows(1)
    wanted = {"a": (None, 2), "kept": (2, 1), "late_out": (1, 1)}
    seen: dict = {}

    def counted() -> bool:
        seen.clear()
        seen.update(rows_of(runtime.status("late")))
        return seen == wanted

    wait_until(counted, WAIT, f"late's counts {wanted} (last seen {seen})")
    for name in ("early", "late"):
        runtime.stop(name)
