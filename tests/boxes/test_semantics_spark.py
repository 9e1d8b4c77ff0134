"""Label semantics on real Spark: Figure 7 under both semantics, and READ_AGGREGATE on Figure 6.

Figure 6 as the paper draws it is a union of in1 and in2, then an aggregate: its averages
reveal no tuple's value, so in1 and in2 are aggregate-only in them, and a reader with
READ_TUPLE on in1 and only READ_AGGREGATE on in2 receives them; a filter over in2 reveals raw
tuples, and that reader receives nothing from it. The demo's q1 groups by symbol: a symbol is a
tuple's own value, so its results keep their sources raw (docs/labels.md).
"""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest

from boxes.compiler import compile_plan
from boxes.document import load_document, validate
from boxes.labels import LABEL_COLUMN, RAW_COLUMN
from boxes.levels import LEVEL_COLUMN
from boxes.output import STRONG, WEAK
from boxes.secfilter import label_sources, readable_mask, rights, secfilter
from tests.boxes.conftest import at, frames
from tests.boxes.test_borealis import JOIN, JOIN_DATA
from tests.boxes.test_semantics import FIGURE_7, FIGURE_7_OUT
from tests.paper import as_yaml, q1


def _outputs(spark, doc, data):
    plan = validate(load_document(doc if isinstance(doc, str) else as_yaml(doc)))
    tables = {
        n: _sorted(f.toArrow()) for n, f in compile_plan(plan, frames(spark, plan, data)).items()
    }
    return plan, tables


def _sorted(table):
    """A batch result in event-time order (Spark's aggregate gives none)."""
    for time in ("window_start", "time", "left_time"):
        if time in table.column_names:
            return table.sort_by(time)
    return table


@pytest.fixture(scope="module")
def figure_7_join(spark):
    """The join example (in1 ⋈ in2, then in1's fields) with a strong and a weak output."""
    doc = load_document(JOIN)
    doc["outputs"] = {
        "strong_out": {"from": "proj"},
        "weak_out": {"from": "proj", "semantic": WEAK},
    }
    return _outputs(spark, as_yaml(doc), JOIN_DATA)


@pytest.mark.parametrize("semantic", [STRONG, WEAK])
@pytest.mark.parametrize("user", sorted(FIGURE_7))
def test_figure_7_on_spark(figure_7_join, user, semantic):
    plan, tables = figure_7_join
    output = f"{semantic}_out"
    assert plan.semantics()[output] == semantic
    table = tables[output]
    assert table.num_rows == 2 and RAW_COLUMN not in table.column_names
    out = secfilter(table, readable_mask(plan.inputs, FIGURE_7[user]), plan.semantics()[output])
    assert out.num_rows == (2 if FIGURE_7_OUT[semantic][user] else 0)


def figure_6(**sections):
    """q1 as Figure 6 draws it (union, then a windowed average: no group), with more outputs."""
    doc = q1(headless=True, **sections)
    doc["boxes"]["avg"]["group_by"] = []
    return doc


# Window [0s, 10s): in1 and in2; [10s, 20s): in2 only; [20s, 30s): in1 only.
DATA = {
    "in1": [
        {"time": at(1), "symbol": "IBM", "price": 10.0},
        {"time": at(21), "symbol": "IBM", "price": 30.0},
    ],
    "in2": [
        {"time": at(2), "symbol": "BP", "price": 20.0},
        {"time": at(11), "symbol": "BP", "price": 40.0},
        {"time": at(12), "symbol": "XOM", "price": 60.0},
    ],
}
CHEAP_IN2 = {"cheap": {"type": "filter", "in": "in2", "where": "price < 50"}}
# READ_TUPLE on in1, only READ_AGGREGATE on in2
READER = {"tuples": ["in1"], "aggregates": ["in2"]}


def _received(plan, table, who, semantic=STRONG):
    out = secfilter(table, rights(plan.inputs, who["tuples"], who["aggregates"]), semantic)
    return out, label_sources(out, plan.inputs)


def test_a_reader_of_in2_aggregates_gets_the_figure_6_averages_but_no_filtered_tuple(spark):
    plan, tables = _outputs(
        spark, figure_6(boxes=CHEAP_IN2, outputs={"raw": {"from": "cheap"}}), DATA
    )
    assert plan.raw_outputs() == {"out1"}
    averages, sources = _received(plan, tables["out1"], READER)
    assert averages.column("avg_price").to_pylist() == [15.0, 50.0, 30.0]
    assert sources == [["in1", "in2"], ["in2"], ["in1"]]
    assert averages.column(RAW_COLUMN).to_pylist() == [0, 0, 0]  # nothing raw in an average
    assert _received(plan, tables["raw"], READER)[0].num_rows == 0
    # ...which a reader of in2's tuples receives; and the averages need a right on every source
    assert _received(plan, tables["raw"], {"tuples": ["in2"], "aggregates": []})[0].num_rows == 2
    assert _received(plan, tables["out1"], {"tuples": [], "aggregates": ["in2"]})[1] == [["in2"]]
    # under the weak semantic READ_AGGREGATE on in2 alone is enough for an average involving it
    weak, _ = _received(plan, tables["out1"], {"tuples": [], "aggregates": ["in2"]}, WEAK)
    assert weak.column("avg_price").to_pylist() == [15.0, 50.0]


@pytest.mark.parametrize(
    "change",
    [
        {"group_by": ["symbol"]},  # a group-by key is a tuple's own value (the demo's q1)
        {"aggregates": {"hi": "max(price)"}},  # a max is one tuple's value
        {"aggregates": {"avg_price": "avg(price)", "lo": "min(price)"}},
        {"window": {"rows": 2}},  # a count window's bounds are its tuples' event times
    ],
    ids=["group_by", "max", "min_beside_avg", "count_window"],
)
def test_aggregates_that_reveal_a_value_keep_their_sources_raw(spark, change):
    doc = figure_6()
    doc["boxes"]["avg"].update(copy.deepcopy(change))
    plan, tables = _outputs(spark, doc, DATA)
    assert plan.raw_outputs() == frozenset()
    table = tables["out1"]
    assert table.num_rows > 0 and RAW_COLUMN not in table.column_names
    out, sources = _received(plan, table, READER)
    assert sources and all(s == ["in1"] for s in sources)  # only what in1 alone gave


def test_labels_cost_nothing_more_where_no_aggregate_only_step_is_upstream(spark):
    """Only the output behind an average carries ``_raw``; the filter's output in the same
    diagram keeps the plain one-word label, and Spark's plan for it has no raw words."""
    plan, tables = _outputs(
        spark, figure_6(boxes=CHEAP_IN2, outputs={"raw": {"from": "cheap"}}), DATA
    )
    assert tables["raw"].column_names == ["time", "symbol", "price", LABEL_COLUMN]
    assert str(tables["raw"].schema.field(LABEL_COLUMN).type) == "int64"
    summary = tables["out1"].schema
    assert str(summary.field(LABEL_COLUMN).type) == str(summary.field(RAW_COLUMN).type) == "int64"
    outputs = compile_plan(plan, frames(spark, plan, DATA))
    assert "w1" not in outputs["raw"]._jdf.queryExecution().analyzed().toString()


def test_a_join_ors_the_raw_sources_of_both_sides(spark):
    """in1's tuples joined with in2's averages: the raw sources are in1's, so READ_TUPLE on in1
    and READ_AGGREGATE on in2 receive the join, and READ_AGGREGATE on both does not."""
    doc = figure_6(
        boxes={
            "avg": {
                "type": "aggregate",
                "in": "in2",
                "window": {"size": "10s"},
                "aggregates": {"avg_price": "avg(price)"},
            },
            "keyed": {
                "type": "map",
                "in": "avg",
                "fields": {"time": "window_end", "k": "1", "avg_price": "avg_price"},
            },
            "ones": {
                "type": "map",
                "in": "in1",
                "fields": {"time": "time", "k": "1", "price": "price"},
            },
            "both": {
                "type": "join",
                "left": "ones",
                "right": "keyed",
                "on": ["k"],
                "within": "10s",
            },
        },
    )
    del doc["boxes"]["merged"]
    doc["outputs"] = {"out1": {"from": "both"}}
    plan, tables = _outputs(spark, doc, DATA)
    table = tables["out1"]
    # in1's tuple at 1 s with in2's average of [0s, 10s), the one at 21 s with [10s, 20s)'s
    assert table.column("avg_price").to_pylist() == [20.0, 50.0]
    assert label_sources(table, plan.inputs) == [["in1", "in2"]] * 2
    assert table.column(RAW_COLUMN).to_pylist() == [0b01] * 2  # in1 = bit 0
    assert _received(plan, table, READER)[0].num_rows == 2
    assert _received(plan, table, {"tuples": [], "aggregates": ["in1", "in2"]})[0].num_rows == 0


def test_a_diagram_at_a_level_splits_the_level_and_the_raw_sources(spark):
    plan = validate(load_document(as_yaml(figure_6())))
    plan = replace(plan, level={}, clearance=0)  # public: every tuple here is public
    table = _sorted(compile_plan(plan, frames(spark, plan, DATA))["out1"].toArrow())
    assert table.column(LEVEL_COLUMN).to_pylist() == [0, 0, 0]
    assert table.column(RAW_COLUMN).to_pylist() == [0, 0, 0]
    assert label_sources(table, plan.inputs) == [["in1", "in2"], ["in2"], ["in1"]]
