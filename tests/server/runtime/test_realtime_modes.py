"""Which outputs run in real-time mode and why (``server/runtime/modes.py``): pure, no Spark."""

from __future__ import annotations

import pytest
from runtime_helpers import TRADE, plan_of, union_doc

from boxes.document import validate
from boxes.errors import DiagramInvalid
from boxes.onescan import real_time_sources
from boxes.types import parse_schema
from server.runtime.checkpoints import DiagramDir
from server.runtime.modes import MICRO_BATCH, NOT_ASKED, NOT_ENABLED, REAL_TIME, Mode, decide

QUOTE, _ = parse_schema(  # TRADE's fields, no event time: another schema
    {"fields": {"time": "timestamp", "symbol": "string", "price": "double"}}, "quote"
)


def asking(doc: dict) -> dict:
    return {**doc, "realtime": True}


def one_box(box: dict, inputs: tuple[str, ...] = ("a",)) -> dict:
    return {
        "version": 1,
        "name": "d",
        "inputs": {i: {} for i in inputs},
        "boxes": {"x": box},
        "outputs": {"d_out": {"from": "x"}},
    }


def shown(doc: dict, budget: int = 1, in_use: int = 0) -> tuple[str, str]:
    (mode,) = decide(plan_of(doc), budget, in_use).values()
    return mode.mode, mode.reason


def test_a_filter_over_a_union_runs_in_real_time_when_asked_and_slots_are_free():
    union = asking(union_doc("d", ["a", "b", "c"], "price > 1"))  # one source: 1 slot
    assert shown(union, budget=1) == (REAL_TIME, "1 of 1 real-time slots")
    assert shown(union, budget=2, in_use=2) == (
        MICRO_BATCH,
        "no real-time slot free (2 of 2 in use, 1 needed)",
    )
    assert shown(union_doc("d", ["a"], "price > 1")) == (MICRO_BATCH, NOT_ASKED)


def test_a_box_between_an_input_and_its_union_keeps_a_source_per_stream():
    """Read as one source, the union's branches would be that source twice, which Spark's
    real-time mode refuses: so each stream is a source, a slot, of its own."""
    doc = asking(union_doc("d", ["a", "b"]))
    doc["boxes"] = {
        "hi": {"type": "filter", "in": "a", "where": "price > 1"},
        "merged": {"type": "union", "in": ["hi", "b"]},
    }
    assert real_time_sources(plan_of(doc)) == [["a"], ["b"]]
    assert shown(doc, budget=2) == (REAL_TIME, "2 of 2 real-time slots")
    assert shown(doc, budget=1) == (
        MICRO_BATCH,
        "no real-time slot free (0 of 1 in use, 2 needed)",
    )


def test_the_streams_of_two_schemas_are_two_sources():
    """A source reads one schema's streams: a union of each schema's streams is a slot, and
    so is each of two unions of one schema (one source twice is refused)."""
    doc = asking(union_doc("d", ["a", "b", "c", "e"]))
    doc["boxes"] = {
        "trades": {"type": "union", "in": ["a", "b"]},
        "quotes": {"type": "union", "in": ["c", "e"]},
    }
    doc["outputs"] = {"t_out": {"from": "trades"}, "q_out": {"from": "quotes"}}
    plan = validate(doc, {"a": TRADE, "b": TRADE, "c": QUOTE, "e": QUOTE})
    assert real_time_sources(plan) == [["a", "b"], ["c", "e"]]
    assert {o: (m.mode, m.reason) for o, m in decide(plan, budget=2, in_use=0).items()} == {
        "t_out": (REAL_TIME, "1 of 2 real-time slots"),
        "q_out": (REAL_TIME, "1 of 2 real-time slots"),
    }
    doc["boxes"]["both"] = {"type": "union", "in": ["trades", "quotes"]}
    doc["outputs"] = {"d_out": {"from": "both"}}
    plan = validate(doc, {name: TRADE for name in doc["inputs"]})
    assert real_time_sources(plan) == [["a", "b"], ["c", "e"]]
    assert shown(doc, budget=2) == (REAL_TIME, "2 of 2 real-time slots")


def test_an_output_that_is_not_row_for_row_says_which_box_holds_it_back():
    join = {
        "type": "join",
        "left": "a",
        "right": "c",
        "on": ["symbol"],
        "within": "10s",
    }
    window = {"type": "aggregate", "in": "a", "aggregates": {"n": "count()"}}
    assert shown(asking(one_box(join, ("a", "c")))) == (MICRO_BATCH, "a stream-stream join")
    assert shown(asking(one_box({**window, "window": {"rows": 5}}))) == (
        MICRO_BATCH,
        "a count window",
    )
    assert shown(asking(one_box({**window, "window": {"size": "10s"}}))) == (
        MICRO_BATCH,
        "an aggregate (windows are emitted once)",
    )


def test_a_union_of_an_input_with_itself_stays_in_micro_batches():
    doc = asking(union_doc("d", ["a"]))
    doc["boxes"] = {
        "hi": {"type": "filter", "in": "a", "where": "price > 1"},
        "lo": {"type": "filter", "in": "a", "where": "price < 0"},
        "both": {"type": "union", "in": ["hi", "lo"]},
    }
    doc["outputs"] = {"d_out": {"from": "both"}}
    assert shown(doc) == (MICRO_BATCH, "a union that reads a twice")


def test_slots_are_counted_per_source_and_a_full_budget_keeps_micro_batches():
    doc = asking(union_doc("d", ["a"], "price > 1"))
    assert shown(doc, budget=2, in_use=2) == (
        MICRO_BATCH,
        "no real-time slot free (2 of 2 in use, 1 needed)",
    )
    assert shown(doc, budget=0) == (MICRO_BATCH, NOT_ENABLED)
    # two outputs of one plan: the second finds the first's slot taken
    two = {**doc, "outputs": {"d_out": {"from": "kept"}, "d_all": {"from": "a"}}}
    modes = decide(plan_of(two), 1, 0)
    assert sorted(m.reason for m in modes.values()) == [
        "1 of 1 real-time slots",
        "no real-time slot free (1 of 1 in use, 1 needed)",
    ]


def test_realtime_must_be_true_or_false():
    with pytest.raises(DiagramInvalid) as err:
        validate({**union_doc("d", ["a"]), "realtime": "yes"}, {"a": TRADE})
    (problem,) = err.value.problems
    assert (problem.code, problem.path) == ("WRONG_TYPE", "realtime")
    assert "true or false" in problem.message


def test_asking_changes_the_plans_fingerprint():
    assert plan_of(asking(union_doc("d", ["a"]))).to_dict()["realtime"] is True
    assert "realtime" not in plan_of(union_doc("d", ["a"])).to_dict()


def test_an_output_carried_to_a_new_version_keeps_the_mode_its_checkpoint_was_written_in(
    tmp_path,
):
    """A real-time query's checkpoint is not a micro-batch one: an output that ran in
    micro-batches for want of a slot, carried to a new version when a slot is free, must run
    in micro-batches again (and the other way round), not start a query of the other kind
    over it."""
    old, new = DiagramDir(tmp_path, "d", "v1"), DiagramDir(tmp_path, "d", "v2")
    ran = Mode(MICRO_BATCH, "no real-time slot free (1 of 1 in use, 1 needed)")
    old.keep_mode("d_out", ran.stored())
    for location in (old.checkpoint("d_out"), old.results("d_out")):
        location.child("0").put(b"")
    new.adopt("d_out", old.checkpoint("d_out"), old.results("d_out"), old.mode("d_out"))
    plan = plan_of(asking(union_doc("d", ["a"], "price > 1")))
    kept = {o: Mode(**m) for o in plan.outputs if (m := new.mode(o)) is not None}
    (mode,) = decide(plan, budget=1, in_use=0, kept=kept).values()
    assert (mode.mode, mode.slots) == (MICRO_BATCH, 0)
