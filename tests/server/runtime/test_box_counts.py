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
        assert names == {"box:a", "box:b", "box:kept"}  # a union is not observed
        wait_until(lambda: rows_of(runtime.status("out")) == COUNTED, WAIT, "the counts")
    else:
        assert not {n for n in names if n.startswith(observed.PREFIX)}
        assert runtime.status("out")["boxes"] == {}
    runtime.stop("out")
