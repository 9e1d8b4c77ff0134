"""Round trip: diagram -> CQL -> diagram gives the same document, for every diagram the dialect
expresses (hypothesis draws queries, whose compiled documents are those diagrams), and the
printer refuses, with a code, a diagram that has no CQL form."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boxes import codes
from boxes.cql import compile_cql, to_cql, validate_cql
from boxes.document import load_document, validate
from boxes.errors import DiagramInvalid

STREAMS = (
    "CREATE DIAGRAM rt;\n"
    "CREATE STREAM s1 (t timestamp, k string, v long, x double) EVENT TIME t LATENESS 2s;\n"
    "CREATE STREAM s2 (t timestamp, k string, v long, x double) EVENT TIME t;\n"
)
durations = st.sampled_from(["1s", "10s", "500ms", "2m", "1h"])
predicates = st.sampled_from(["v > 3", "k = 'a' OR x < 2.5", "v BETWEEN 1 AND 9", "k LIKE 'a%'"])
aggregates = st.lists(
    st.sampled_from(["count()", "sum(v)", "avg(x)", "min(k)", "max(v * 2)"]),
    min_size=1,
    max_size=3,
    unique=True,
)


@st.composite
def windows(draw, grouped: bool):
    kind = draw(st.sampled_from(["range", "rows"]))
    if kind == "range":
        size = draw(st.integers(1, 60))
        slide = draw(st.none() | st.integers(1, size))
        return f"[RANGE {size}s" + (f" SLIDE {slide}s]" if slide else "]")
    rows = draw(st.integers(1, 500))
    slide = draw(st.none() | st.integers(1, rows))
    # Grouped: the last rows of each group (PARTITION BY) or of the stream, then grouped.
    head = "[PARTITION BY k ROWS" if grouped and draw(st.booleans()) else "[ROWS"
    return f"{head} {rows}" + (f" SLIDE {slide}]" if slide else "]")


@st.composite
def selects(draw, stream: str, shape: int):
    """One SELECT; ``shape`` fixes the output schema, so union branches can share it."""
    where = draw(st.none() | predicates)
    tail = f"\nWHERE {where}" if where else ""
    if shape == 0:
        return f"SELECT * FROM {stream}{tail}"
    if shape == 1:
        return f"SELECT t, k, v * 2 AS w FROM {stream}{tail}"
    grouped = shape == 2
    items = [f"{a} AS a{i}" for i, a in enumerate(draw(aggregates))]
    head = "SELECT " + ", ".join((["k"] if grouped else []) + items)
    text = f"{head}\nFROM {stream} {draw(windows(grouped))}{tail}"
    if grouped:
        text += "\nGROUP BY k"
    if draw(st.booleans()):
        text += "\nHAVING a0 IS NOT NULL"
    return text


@st.composite
def queries(draw):
    kind = draw(st.sampled_from(["select", "union", "join", "rows join"]))
    if kind == "rows join":  # terms of one side filter it, of both sides the pairs
        n, m = draw(st.integers(1, 500)), draw(st.integers(1, 500))
        terms = ["a.k = b.k"] + draw(
            st.lists(st.sampled_from(["a.v > 3", "(b.k = 'a' OR b.x < 2.5)", "a.v > b.v"]))
        )
        return f"SELECT * FROM s1 AS a [ROWS {n}], s2 AS b [ROWS {m}] WHERE " + " AND ".join(
            draw(st.permutations(terms))
        )
    if kind == "join":
        d = draw(durations)
        where = draw(st.none() | st.just("a.v > b.v"))
        text = f"SELECT * FROM s1 AS a [RANGE {d}] JOIN s2 AS b [RANGE {d}] ON a.k = b.k"
        return text + (f" WHERE {where}" if where else "")
    shape = draw(st.integers(0, 3))
    if kind == "union":
        first = draw(selects("s1", shape))  # the second branch: the same, over s2
        return f"{first}\nUNION\n{first.replace('FROM s1', 'FROM s2')}"
    return draw(selects(draw(st.sampled_from(["s1", "s2"])), shape))


LEVELS = st.none() | st.dictionaries(
    st.sampled_from(["banks", "oil"]), st.sampled_from(["A", "B", "T", "⊥"]), min_size=1
)


@settings(max_examples=200, deadline=None)
@given(st.lists(queries(), min_size=1, max_size=3), LEVELS)
def test_diagram_to_cql_to_diagram_is_the_same_document(texts, level):
    at = f" AT LEVEL [{', '.join(f'{c}: {v}' for c, v in level.items())}]" if level else ""
    script = STREAMS + ";\n".join(f"INSERT INTO o{i}\n{q}{at}" for i, q in enumerate(texts))
    # Every stream read, so the document is valid; then print and compile again.
    script += f";\nINSERT INTO all1 SELECT * FROM s1{at};\nINSERT INTO all2 SELECT * FROM s2{at}"
    doc, _ = validate_cql(script)
    assert doc.get("level") == level
    printed = to_cql(doc)
    assert compile_cql(printed) == doc, printed


def test_any_box_names_come_back_equal_up_to_renaming():
    doc = load_document(
        """
version: 1
name: q1
inputs:
  in1: {schema: {fields: {time: timestamp, symbol: string, price: double}, event_time: time}}
  in2: {schema: {fields: {time: timestamp, symbol: string, price: double}, event_time: time}}
boxes:
  merged: {type: union, in: [in1, in2]}
  avg: {type: aggregate, in: merged, window: {size: 10s, slide: 10s},
        group_by: [symbol], aggregates: {avg_price: avg(price), n: count()}}
outputs:
  out1: {from: avg}
"""
    )
    validate(doc)
    with pytest.raises(DiagramInvalid) as err:
        to_cql(doc)  # the union feeds an aggregate: no single CQL query has that shape
    assert [(p.code, p.path) for p in err.value.problems] == [
        (codes.CQL_NOT_EXPRESSIBLE, "boxes.merged")
    ]
    doc["boxes"] = {
        "avg": {**doc["boxes"]["avg"], "in": "in1"},
    }
    doc["inputs"].pop("in2")
    again = compile_cql(to_cql(doc))
    assert again["boxes"] == {"out1_agg": doc["boxes"]["avg"]}
    assert again["outputs"] == {"out1": {"from": "out1_agg"}}


def test_a_box_feeding_two_others_has_no_cql_form():
    doc = compile_cql("INSERT INTO a SELECT * FROM s WHERE v > 1")
    doc["outputs"]["b"] = {"from": "a_where"}
    with pytest.raises(DiagramInvalid) as err:
        to_cql(doc)
    assert err.value.problems[0].code == codes.CQL_NOT_EXPRESSIBLE


def test_from_an_output_the_caller_may_read_is_a_derived_input_and_prints_back():
    from boxes.cql.compiler import compile_script
    from boxes.cql.parser import parse
    from boxes.types import parse_schema

    schema = parse_schema({"fields": {"price": "double"}}, "s")[0]
    text = "CREATE DIAGRAM d;\nSELECT price FROM bobout WHERE price < 100;\n"
    doc = compile_script(parse(text), {}, None, None, {"bobout": schema}).document
    assert doc["inputs"] == {"bobout": {"output": "bobout"}}
    # the same name as a stream the caller may read: the stream is meant
    doc = compile_script(parse(text), {"bobout": schema}, None, None, {"bobout": schema}).document
    assert doc["inputs"] == {"bobout": {}}
    # a derived input named apart from its output prints the output's name
    local = {
        "version": 1,
        "name": "d",
        "inputs": {"theirs": {"output": "bobout"}},
        "boxes": {"cheap": {"type": "filter", "in": "theirs", "where": "price < 100"}},
        "outputs": {"out": {"from": "cheap"}},
    }
    assert "FROM bobout" in to_cql(local)
