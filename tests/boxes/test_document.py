"""The document loader and validator: what a valid document becomes, and how problems are told."""

from __future__ import annotations

import json

import pytest

from boxes.document import built, load_document, validate
from boxes.durations import parse_duration
from boxes.errors import DiagramInvalid
from boxes.limits import MAX_DEPTH
from boxes.types import parse_schema
from catalog.bootstrap import DEMO_SCHEMA
from tests.paper import as_yaml, q1


def _q1_text() -> str:
    """The paper's q1 plus a join, its inputs out of order (a plan sorts them), as YAML text."""
    doc = q1(
        headless=True,
        outputs={"out2": {"from": "j"}},
        boxes={
            "j": {"type": "join", "left": "in1", "right": "avg", "on": ["symbol"], "within": "1m"}
        },
    )
    doc["inputs"] = {"in2": {"schema": "s", "lateness": "2s"}, "in1": {"schema": "s"}}
    return as_yaml(doc).replace("'on':", "on:")  # a bare `on`, as people write it


Q1 = _q1_text()
SCHEMA = parse_schema(DEMO_SCHEMA, "s")[0]


def test_a_valid_document_becomes_a_plan():
    plan = validate(load_document(Q1))
    assert plan.name == "q1"
    assert plan.inputs == ("in1", "in2")
    assert plan.input_schemas == {"in1": SCHEMA, "in2": SCHEMA}
    assert plan.input_lateness == {"in1": 0.0, "in2": 2.0}
    assert plan.label_words == 1 and "label" not in plan.to_dict()  # fingerprints stay as they were
    assert [b.name for b in plan.boxes] == ["in1", "in2", "merged", "avg", "j", "out1", "out2"]
    assert plan.outputs["out2"].names == [
        "time",
        "symbol",
        "price",
        "window_start",
        "window_end",
        "avg_price",
        "n",
    ]
    json.dumps(plan.to_dict())


def test_boxes_built_before_are_reused_only_where_nothing_they_depend_on_changed():
    doc = load_document(Q1)
    before = validate(doc)
    boxes = {b.name: b for b in before.boxes}
    edited = json.loads(json.dumps(doc))
    edited["boxes"]["j"]["within"] = "2m"  # a changed specification
    edited["boxes"]["narrow"] = {
        "type": "map",
        "in": "in1",
        "fields": {"time": "time", "symbol": "symbol"},
    }
    edited["boxes"]["j"]["left"] = "narrow"  # and, below it, a changed upstream schema
    after = {b.name: b for b in validate(edited, reuse=built(doc, before)).boxes}
    assert after["merged"] is boxes["merged"] and after["avg"] is boxes["avg"]
    fresh = {b.name: b for b in validate(edited).boxes}
    assert after["j"] is not boxes["j"] and after["j"] == fresh["j"]
    levelled = {**doc, "level": {}}  # a box at a level may read _level: never reused across
    again = {b.name: b for b in validate(levelled, reuse=built(doc, before)).boxes}
    assert again["avg"] is not boxes["avg"] and again["avg"] == boxes["avg"]


def test_json_documents_and_the_yaml_on_key():
    """YAML 1.1 reads a bare ``on`` as True; the loader keeps it a key, as JSON does."""
    assert "\n    on: [symbol]\n" in Q1
    doc = load_document(Q1)
    assert doc["boxes"]["j"]["on"] == ["symbol"]
    compact = json.dumps(doc, separators=(",", ":"))  # as a browser's JSON.stringify writes it
    assert validate(load_document(compact)).to_dict() == validate(doc).to_dict()


def test_server_mode_takes_schemas_from_the_catalog():
    doc = load_document(Q1)
    for spec in doc["inputs"].values():
        spec.pop("schema")
    del doc["schemas"]
    plan = validate(doc, streams={"in1": SCHEMA, "in2": SCHEMA, "other": SCHEMA})
    assert plan.input_schemas == {"in1": SCHEMA, "in2": SCHEMA}


def test_every_problem_is_reported_at_once_each_with_its_path():
    doc = load_document(Q1)
    doc["boxes"]["avg"]["window"]["size"] = "ten seconds"
    doc["boxes"]["merged"]["in"] = ["in1", "in3"]
    doc["outputs"]["out3"] = {"from": "nowhere"}
    doc["version"] = 7
    with pytest.raises(DiagramInvalid) as err:
        validate(doc)
    assert sorted((p.code, p.path) for p in err.value.problems) == [
        ("INVALID_DURATION", "boxes.avg.window.size"),
        ("UNKNOWN_INPUT", "boxes.merged.in.1"),
        ("UNKNOWN_INPUT", "outputs.out3.from"),
        ("UNSUPPORTED_VERSION", "version"),
    ]
    assert str(err.value).startswith("[DIAGRAM_INVALID] ")


def test_a_broken_box_does_not_flood_its_downstream_boxes():
    doc = load_document(Q1)
    doc["boxes"]["merged"] = {"type": "filter", "in": "in1", "where": "nonsense > 1"}
    del doc["inputs"]["in2"]
    with pytest.raises(DiagramInvalid) as err:
        validate(doc)
    assert err.value.codes == ["UNKNOWN_FIELD"]


def test_a_cycle_is_named_in_data_flow_order():
    doc = load_document(Q1)
    doc["boxes"]["merged"]["in"] = ["in1", "in2", "j"]
    with pytest.raises(DiagramInvalid) as err:
        validate(doc)
    (problem,) = err.value.problems
    assert problem.code == "DIAGRAM_CYCLE"
    assert problem.message.startswith("merged -> avg -> j -> merged")


def test_duplicate_keys_are_found_with_their_path():
    with pytest.raises(DiagramInvalid) as err:
        load_document(Q1.replace("  out2: {from: j}", "  out2: {from: j}\n  out1: {from: j}"))
    assert [(p.code, p.path) for p in err.value.problems] == [("DUPLICATE_NAME", "outputs.out1")]


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("500ms", 0.5),
        ("10s", 10),
        ("1.5m", 90),
        ("2h", 7200),
        ("1d", 86400),
        ("0s", 0),
        ("10", None),
        ("ten s", None),
        ("-1s", None),
        ("400d", None),
        (10, None),
        (None, None),
    ],
)
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    "text",
    [
        "- " * 3000 + "1",
        "a: " + "{b: " * 3000 + "1" + "}" * 3000,
        '{"a": ' * 5000 + "1" + "}" * 5000,
    ],
)
def test_deep_nesting_is_refused_at_the_limit_not_a_crash(text):
    with pytest.raises(DiagramInvalid) as refused:
        load_document(text)
    assert [p.code for p in refused.value.problems] == ["TOO_DEEP"]
    assert (
        f"deeper than the limit of {MAX_DEPTH} levels (at line 1"
        in refused.value.problems[0].message
    )


def test_nesting_up_to_the_limit_loads():
    value = load_document("a: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1))["a"]
    depth = 0
    while value is not None:
        depth, value = depth + 1, value[0] if value else None
    assert depth == MAX_DEPTH - 1
