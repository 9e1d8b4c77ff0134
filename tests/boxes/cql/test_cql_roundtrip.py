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


def test_q1_a_union_feeding_an_aggregate_prints_with_a_view():
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
    printed = to_cql(doc)
    assert "CREATE VIEW merged AS\nSELECT *\nFROM in1\nUNION\nSELECT *\nFROM in2;" in printed
    assert "FROM merged [RANGE 10s SLIDE 10s]" in printed
    again = compile_cql(printed)
    validate(again)
    assert again["boxes"] == {"merged": doc["boxes"]["merged"], "out1_agg": doc["boxes"]["avg"]}
    assert again["outputs"] == {"out1": {"from": "out1_agg"}}


def test_a_box_feeding_two_others_is_one_view_both_read():
    doc = compile_cql(
        "CREATE STREAM s (t timestamp, v long) EVENT TIME t;\n"
        "INSERT INTO a SELECT * FROM s WHERE v > 1"
    )
    doc["outputs"]["b"] = {"from": "a_where", "semantic": "weak"}
    printed = to_cql(doc)
    assert printed.count("CREATE VIEW a_where AS") == 1
    assert "SEMANTIC WEAK" in printed
    again = compile_cql(printed)
    assert again["boxes"] == {"a_where": doc["boxes"]["a_where"]}
    assert again["outputs"] == {"a": {"from": "a_where"}, "b": doc["outputs"]["b"]}


def test_a_view_may_not_take_a_name_in_use():
    for script in (
        "CREATE STREAM s (t timestamp, v long) EVENT TIME t;\n"
        "CREATE VIEW s AS SELECT * FROM s WHERE v > 1; SELECT * FROM s",
        "CREATE VIEW out_where AS SELECT * FROM s WHERE v > 2; SELECT * FROM out_where WHERE v > 1",
    ):
        with pytest.raises(DiagramInvalid) as err:
            compile_cql(script)
        assert [p.code for p in err.value.problems] == [codes.CQL_DUPLICATE_VIEW]


# Random diagrams of the five box types, shaped as the editor lets anyone draw them: boxes
# over inputs of one schema (filters, maps keeping the schema, unions of any of them, each
# read by any number of others), then aggregates (time or count windows, HAVING or not) and
# joins (time or count bounds) over any of those, and outputs reading any box or input.
FIELDS = {"t": "timestamp", "k": "string", "v": "long", "x": "double"}


@st.composite
def diagrams(draw):
    inputs = [f"s{i}" for i in range(draw(st.integers(1, 3)))]
    pool, boxes = list(inputs), {}
    for i in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["filter", "map", "union"] if len(pool) > 1 else ["filter"]))
        name, source = f"b{i}", draw(st.sampled_from(pool))
        if kind == "filter":
            boxes[name] = {"type": "filter", "in": source, "where": draw(predicates)}
        elif kind == "map":
            fields = {"t": "t", "k": "k", "v": "v * 2", "x": "x"}
            boxes[name] = {"type": "map", "in": source, "fields": fields}
        else:
            branches = draw(st.lists(st.sampled_from(pool), min_size=2, max_size=3, unique=True))
            boxes[name] = {"type": "union", "in": branches}
        pool.append(name)
    ends = list(pool)
    for i in range(draw(st.integers(0, 3))):
        name, source = f"e{i}", draw(st.sampled_from(pool))
        kind = draw(st.sampled_from(["time", "count", "join", "rows join"]))
        if kind in ("time", "count"):
            window = {"size": "10s"} if kind == "time" else {"rows": draw(st.integers(1, 50))}
            box = {"type": "aggregate", "in": source, "window": window, "group_by": ["k"]}
            box["aggregates"] = {"n": "count()", "m": "max(v)"}
            if kind == "count" and draw(st.booleans()):
                box["where"] = "v > 1"
            boxes[name] = box
            if draw(st.booleans()):
                boxes[f"{name}_h"] = {"type": "filter", "in": name, "where": "n > 1"}
                ends.append(f"{name}_h")
        else:
            other = draw(st.sampled_from(pool))
            bound = {"within": "5s"} if kind == "join" else {"rows": {"left": 3, "right": 4}}
            boxes[name] = {"type": "join", "left": source, "right": other, "on": ["k"], **bound}
        ends.append(name)
    outputs = {f"o{i}": {"from": n} for i, n in enumerate(draw(st.lists(st.sampled_from(ends))))}
    read = {r for b in boxes.values() for k in ("in", "left", "right") for r in _refs(b.get(k))}
    read |= {o["from"] for o in outputs.values()}
    for name in [*inputs, *boxes]:  # everything is read by something, as validation wants
        if name not in read:
            outputs[f"all_{name}"] = {"from": name}
    schema = {"fields": FIELDS, "event_time": "t"}
    doc = {"version": 1, "name": "dag", "inputs": {s: {"schema": schema} for s in inputs}}
    return {**doc, "boxes": boxes, "outputs": outputs}


def _refs(value) -> list[str]:
    return value if isinstance(value, list) else [value] if value else []


def _shape(doc: dict, node: str):
    """A node up to its box's name: its type, parameters and the shapes it reads."""
    box = (doc.get("boxes") or {}).get(node)
    if box is None:
        return ("input", node)
    params = tuple(sorted((k, repr(v)) for k, v in box.items() if k not in ("in", "left", "right")))
    reads = tuple(_shape(doc, r) for k in ("in", "left", "right") for r in _refs(box.get(k)))
    return params, reads


@settings(max_examples=300, deadline=None)
@given(diagrams())
def test_every_diagram_the_editor_draws_prints_and_comes_back_equal_up_to_names(doc):
    validate(doc)
    printed = to_cql(doc)
    again = compile_cql(printed)
    validate(again)
    assert len(again.get("boxes") or {}) == len(doc["boxes"]), printed
    assert {
        n: (_shape(again, o["from"]), o.get("semantic")) for n, o in again["outputs"].items()
    } == {n: (_shape(doc, o["from"]), o.get("semantic")) for n, o in doc["outputs"].items()}, (
        printed
    )


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
