"""Which outputs of a running diagram keep their checkpoint when a new version replaces it
(``server/control/swap.py``): a changed filter or map before a window keeps it, unless the
map changes what the window reads; a changed window, another input or another output schema
does not; a new output is new."""

from __future__ import annotations

import swapkit

from boxes.document import validate
from boxes.types import parse_schema
from server.control.swap import dropping, judged

STREAMS = {
    name: parse_schema({"fields": swapkit.SCHEMA["fields"], "event_time": "t"}, name)[0]
    for name in ("in1", "in2")
}
DOC = {**swapkit.DOC, "outputs": {**swapkit.DOC["outputs"], "raw": {"from": "kept"}}}


def plan(doc):
    return validate(doc, STREAMS)


def changed(box: str, **change) -> dict:
    return swapkit.changed(DOC, box, **change)


def test_a_changed_filter_before_a_window_keeps_every_output():
    swap = judged(plan(DOC), plan(changed("kept", where="x > 1")))
    assert sorted(swap.kept) == ["counts", "raw"] and swap.dropped == {} and swap.new == []


def test_a_changed_window_drops_its_state_and_keeps_the_stateless_output():
    swap = judged(plan(DOC), plan(changed("n", window={"rows": 4})))
    assert swap.kept == ["raw"] and swap.dropped == {"counts": ["n"]}


def test_a_map_that_changes_what_the_window_reads_drops_its_state():
    mapped = {
        **DOC,
        "boxes": {
            **DOC["boxes"],
            "m": {"type": "map", "in": "kept", "fields": {"t": "t", "k": "k", "x": "x * 2"}},
            "n": {**DOC["boxes"]["n"], "in": "m"},
        },
    }
    assert sorted(judged(plan(DOC), plan(mapped)).kept) == ["counts", "raw"]  # same columns
    renamed = {
        **mapped,
        "boxes": {
            **mapped["boxes"],
            "m": {**mapped["boxes"]["m"], "fields": {"t": "t", "k": "k", "y": "x"}},
        },
    }
    swap = judged(plan(DOC), plan(renamed))
    assert swap.dropped == {"counts": ["n"]} and swap.kept == ["raw"]


def test_another_input_or_a_new_output_starts_afresh():
    other = {
        **changed("kept"),
        "inputs": {"in2": {}},
        "boxes": {**DOC["boxes"], "kept": {**DOC["boxes"]["kept"], "in": "in2"}},
    }
    swap = judged(plan(DOC), plan(other))
    assert swap.kept == [] and swap.dropped == {"counts": ["n"], "raw": []}
    more = {**DOC, "outputs": {**DOC["outputs"], "all": {"from": "in1"}}}
    assert judged(plan(DOC), plan(more)).new == ["all"]


def test_an_output_the_runtime_could_not_carry_counts_as_dropped():
    swap = dropping(judged(plan(DOC), plan(changed("kept", where="x > 1"))), ["raw"])
    assert swap.kept == ["raw"] and swap.shared == ["counts"]
    (dropped,) = swap.to_dict({})["dropped"]
    assert dropped["output"] == "counts" and "shared with other diagrams" in dropped["message"]


def test_an_output_whose_union_turns_from_one_scan_to_branches_starts_afresh():
    """A union read as one scan is one source, in branches a source per input, and Spark
    refuses a checkpoint logged with another number of sources (``boxes/onescan.py``): a
    second reader of an input turns the union back into branches."""
    union = {
        "version": 1,
        "name": "u",
        "inputs": {"in1": {}, "in2": {}},
        "boxes": {
            "both": {"type": "union", "in": ["in1", "in2"]},
            "kept": {"type": "filter", "in": "both", "where": "x > 0"},
        },
        "outputs": {"out": {"from": "kept"}},
    }
    assert judged(plan(union), plan(changed_filter(union))).kept == ["out"]
    read_twice = {**union, "outputs": {**union["outputs"], "raw": {"from": "in1"}}}
    swap = judged(plan(union), plan(read_twice))
    assert swap.kept == [] and swap.dropped == {"out": []} and swap.new == ["raw"]


def changed_filter(doc: dict) -> dict:
    return swapkit.changed(doc, "kept", where="x > 1")
