"""Diagrams as real Spark streaming queries over the ingestion log."""

from __future__ import annotations

import pytest
from runtime_helpers import TRADE, Collector, plan_of, union_doc, wait_until

from boxes.document import validate
from boxes.errors import InvalidInput, NotFound, TooLarge
from boxes.types import parse_schema

QUOTE, _ = parse_schema({"fields": {"venue": "string", "bid": "double"}}, "quote")


def trade(symbol: str, price: float) -> dict:
    return {"symbol": symbol, "price": price}


def test_results_carry_their_labels_and_a_rejected_batch_reaches_no_diagram(runtime):
    for name in ("in1", "in2"):
        runtime.create_stream(name, TRADE)
    everything, cheap = Collector(), Collector()
    runtime.deploy("all", plan_of(union_doc("all", ["in1", "in2"])), everything)
    runtime.deploy("cheap", plan_of(union_doc("cheap", ["in1", "in2"], "price < 100")), cheap)
    runtime.append("in1", [trade("a", 1.0), trade("b", 500.0)])
    with pytest.raises(InvalidInput):
        runtime.append("in2", [trade("bad1", 2.0), {"symbol": "bad2", "price": "oops"}])
    with pytest.raises(NotFound):
        runtime.append("in3", [trade("lost", 2.0)])
    runtime.append("in2", [trade("c", 3.0)])
    rows = everything.wait_for_rows(3)
    assert sorted((r["symbol"], r["_label"]) for r in rows) == [("a", 1), ("b", 1), ("c", 2)]
    assert sorted(r["symbol"] for r in cheap.wait_for_rows(2)) == ["a", "c"]
    assert runtime.recent("all_out", 2).num_rows == 2
    status = runtime.status("all")
    assert status["state"] == "running"
    assert status["outputs"]["all_out"]["rows"] == 3


def test_outputs_reading_streams_of_different_schemas_deploy_and_run(make_runtime):
    """Each output's query opens a source for its own inputs' schema only: the deploy waits
    for those, not for one per schema of the whole diagram (which never came: issue 42)."""
    runtime = make_runtime(deploy_timeout=30)
    runtime.create_stream("m1", TRADE)
    runtime.create_stream("m2", QUOTE)
    doc = {
        "version": 1,
        "name": "mix",
        "inputs": {"m1": {}, "m2": {}},
        "boxes": {},
        "outputs": {"mix_a": {"from": "m1"}, "mix_b": {"from": "m2"}},
    }
    rows = Collector()
    runtime.deploy("mix", validate(doc, {"m1": TRADE, "m2": QUOTE}), rows)
    assert runtime.status("mix")["state"] == "running"
    runtime.append("m1", [trade("a", 1.0)])
    runtime.append("m2", [{"venue": "x", "bid": 2.0}])
    got = rows.wait_for_rows(2)
    assert sorted(r.get("symbol") or r.get("venue") for r in got) == ["a", "x"]


def test_a_stopped_diagram_resumes_where_it_stopped_while_the_other_runs_on(runtime):
    for name in ("in1", "in2"):
        runtime.create_stream(name, TRADE)
    steady, paused = Collector(), Collector()
    runtime.deploy("steady", plan_of(union_doc("steady", ["in1", "in2"])), steady)
    paused_plan = plan_of(union_doc("paused", ["in1", "in2"]))
    runtime.deploy("paused", paused_plan, paused)
    runtime.append("in1", [trade("before", 1.0)])
    paused.wait_for_rows(1)
    runtime.stop("paused")
    assert runtime.status("paused")["state"] == "stopped"
    runtime.append("in2", [trade("while1", 2.0)])
    runtime.append("in1", [trade("while2", 3.0)])
    assert sorted(r["symbol"] for r in steady.wait_for_rows(3)) == ["before", "while1", "while2"]
    runtime.deploy("paused", paused_plan, paused)
    runtime.append("in1", [trade("after", 4.0)])
    rows = paused.wait_for_rows(4)
    assert sorted(r["symbol"] for r in rows) == ["after", "before", "while1", "while2"]
    assert runtime.status("paused")["state"] == "running"


def test_a_query_stopped_while_logging_its_first_batch_starts_again(make_runtime):
    """Spark writes a batch's offsets to a temporary file and renames it; a query stopped or
    killed in between leaves only that file, and Spark then refuses the checkpoint for ever
    (not empty, yet without a batch). The runtime discards such leftovers before starting.
    (Unshared, so the diagram's own directory holds its query's checkpoint.)"""
    runtime = make_runtime(share_plans=False)
    runtime.create_stream("in1", TRADE)
    plan = plan_of(union_doc("q", ["in1"]))
    runtime.deploy("q", plan, Collector())
    runtime.stop("q")
    checkpoint = runtime._registry.get("q").directory.checkpoint("q_out")
    for log in ("offsets", "commits"):
        for name in checkpoint.child(log).names():
            checkpoint.child(log, name).delete()  # as if batch 0 never got logged
    checkpoint.child("offsets", ".0.6a1f0c2e-2f1b-4a57-9c61-0d3c8e2b9a10.tmp").put(b"")
    rows = Collector()
    runtime.deploy("q", plan, rows)
    runtime.append("in1", [trade("after", 1.0)])
    assert [r["symbol"] for r in rows.wait_for_rows(1)] == ["after"]
    assert checkpoint.child("offsets", "0").exists()


def test_a_failing_diagram_reports_its_error_and_disturbs_no_other(runtime):
    runtime.create_stream("doomed", TRADE)
    runtime.create_stream("fine", TRADE)
    doomed_plan = plan_of(union_doc("doomed", ["doomed"]))
    runtime.deploy("doomed", doomed_plan, Collector())
    survivor = Collector()
    runtime.deploy("survivor", plan_of(union_doc("survivor", ["fine"])), survivor)
    runtime.stop("doomed")
    runtime.append("doomed", [trade("x", 1.0)])
    for segment in runtime.log.directory("doomed").glob("*.seg"):
        segment.unlink()  # the rows the stopped diagram still needs are lost
    runtime.deploy("doomed", doomed_plan, Collector())
    status = wait_until(
        lambda: (
            (s := runtime.status("doomed"))["state"] == "failed"
            and s["restarts"] == runtime.settings.max_restarts
            and s
        ),
        what="the diagram to fail after its automatic restarts",
    )
    assert "LOG_GAP" in status["error"]
    runtime.append("fine", [trade("y", 2.0)])
    assert [r["symbol"] for r in survivor.wait_for_rows(1)] == ["y"]
    assert runtime.status("survivor")["state"] == "running"


def test_a_changed_diagram_starts_afresh_and_compaction_keeps_what_a_stopped_one_needs(runtime):
    runtime.create_stream("in1", TRADE)
    first = Collector()
    old = runtime.deploy("q", plan_of(union_doc("q", ["in1"])), first)
    runtime.append("in1", [trade("one", 1.0)])
    first.wait_for_rows(1)
    runtime.stop("q")
    runtime.append("in1", [trade("two", 2.0)])
    runtime.compact()
    changed = Collector()
    assert runtime.deploy("q", plan_of(union_doc("q", ["in1"], "price > 0")), changed) != old
    runtime.append("in1", [trade("three", 3.0)])
    assert [r["symbol"] for r in changed.wait_for_rows(1)] == ["three"]


def test_the_batch_limit_follows_an_administrators_change(runtime):
    runtime.create_stream("in1", TRADE)
    runtime.set_max_tuples(2)
    with pytest.raises(TooLarge) as refused:
        runtime.append("in1", [trade("a", 1.0)] * 3)
    assert refused.value.code == "BATCH_TOO_LARGE"
    runtime.set_max_tuples(3)
    assert runtime.append("in1", [trade("a", 1.0)] * 3).count == 3
