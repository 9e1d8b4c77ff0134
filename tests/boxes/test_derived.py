"""Derived inputs (``output: NAME``): validation, and labels that keep the upstream's sources.

The Spark tests run an upstream diagram, hand its output (user fields and ``_label``, as its
result log keeps them) to a downstream diagram as a derived input, and check each derived
tuple names exactly the source streams its upstream tuple named.
"""

from __future__ import annotations

from dataclasses import replace

import pyarrow as pa
import pytest
from pyspark.sql import functions as F

from boxes import codes, labels
from boxes.compiler import compile_plan
from boxes.document import load_document, validate
from boxes.errors import DiagramInvalid
from boxes.input import Derived
from boxes.levels import LEVEL_COLUMN, Lattice
from boxes.secfilter import label_sources
from boxes.types import parse_schema
from tests.boxes.conftest import at, frames

SCHEMA, _ = parse_schema(
    {"fields": {"time": "timestamp", "symbol": "string", "price": "double"}, "event_time": "time"},
    "s",
)
assert SCHEMA is not None
UPSTREAM = """
version: 1
name: up
inputs: {a: {}, z: {}}
boxes: {both: {type: union, in: [a, z]}}
outputs: {upout: {from: both}}
"""
DOWNSTREAM = """
version: 1
name: down
inputs: {d: {output: upout}, m: {}}
boxes:
  cheap: {type: filter, in: d, where: "price < 100"}
  all: {type: union, in: [cheap, m]}
outputs: {downout: {from: all}}
"""
STREAMS = {name: SCHEMA for name in ("a", "m", "z")}


def derived_from(plan) -> dict[str, Derived]:
    return {
        name: Derived(schema, plan.label_sources, plan.level is not None)
        for name, schema in plan.outputs.items()
    }


def plans():
    up = validate(load_document(UPSTREAM), STREAMS)
    return up, validate(load_document(DOWNSTREAM), STREAMS, derived_from(up))


def problems(text: str, outputs: dict[str, Derived]) -> list[tuple[str, str]]:
    with pytest.raises(DiagramInvalid) as err:
        validate(load_document(text), STREAMS, outputs)
    return [(p.code, p.path) for p in err.value.problems]


def test_a_derived_plan_labels_by_the_original_sources():
    up, down = plans()
    assert down.inputs == ("d", "m")
    assert down.label_sources == ("a", "m", "z")
    assert down.derived() == {"d": "upout"} and down.streams() == ("m",)
    (d,) = [b for b in down.boxes if b.name == "d"]
    assert d.output == "upout" and d.remap == (0, 2)
    assert down.to_dict()["sources"] == ["a", "m", "z"]
    assert "sources" not in up.to_dict()  # plans without derived inputs keep their fingerprint


@pytest.mark.parametrize(
    "change, expected",
    [
        (
            ("d: {output: upout}", "d: {output: upout, schema: {fields: {price: double}}}"),
            (codes.DERIVED_INPUT_SHAPE, "inputs.d.schema"),
        ),
        (("d: {output: upout}", "d: {output: nowhere}"), (codes.NOT_FOUND, "inputs.d.output")),
        (("d: {output: upout}", "d: {output: downout}"), (codes.DERIVED_CYCLE, "inputs.d.output")),
        (
            ("{downout: {from: all}}", "{downout: {from: all, semantic: weak}}"),
            (codes.DERIVED_WEAK, "outputs.downout.semantic"),
        ),
    ],
)
def test_derived_inputs_are_checked(change, expected):
    up, _ = plans()
    outputs = derived_from(up) | {"downout": Derived(SCHEMA, ("a",))}
    assert expected in problems(DOWNSTREAM.replace(*change), outputs)


def test_reading_an_output_at_a_level_needs_a_level():
    up, _ = plans()
    leveled = {"upout": Derived(up.outputs["upout"], up.label_sources, level=True)}
    assert problems(DOWNSTREAM, leveled) == [(codes.DERIVED_NEEDS_LEVEL, "inputs.d.output")]
    validate(load_document(DOWNSTREAM + "level: {banks: T}\n"), STREAMS, leveled)


def test_without_the_server_a_derived_input_names_nothing():
    with pytest.raises(DiagramInvalid) as err:
        validate(load_document(DOWNSTREAM.replace("m: {}", "m: {schema: {fields: {x: long}}}")))
    assert (codes.NOT_FOUND, "inputs.d.output") in [(p.code, p.path) for p in err.value.problems]


def rows(second: float, price: float) -> list[dict]:
    return [{"time": at(second), "symbol": "X", "price": price}]


def test_derived_tuples_keep_their_upstream_sources(spark):
    up, down = plans()
    data = {"a": rows(1, 10.0) + rows(2, 500.0), "z": rows(3, 20.0)}
    (upstream,) = compile_plan(up, frames(spark, up, data)).values()
    up_table = upstream.toArrow()
    by_price = dict(
        zip(up_table["price"].to_pylist(), label_sources(up_table, up.label_sources), strict=True)
    )
    assert by_price == {10.0: ["a"], 500.0: ["a"], 20.0: ["z"]}
    inputs = frames(spark, down, {"m": rows(4, 30.0)})
    inputs["d"] = upstream.withColumn(LEVEL_COLUMN, F.lit(0).cast("long"))  # as a result log
    (out,) = compile_plan(down, inputs).values()
    table = out.toArrow()
    got = dict(
        zip(table["price"].to_pylist(), label_sources(table, down.label_sources), strict=True)
    )
    assert got == {10.0: by_price[10.0], 20.0: by_price[20.0], 30.0: ["m"]}


@pytest.mark.parametrize(
    "bits, remap, words, expected",
    [
        ([0, 1], [0, 1], 1, [0, 1]),  # the same layout: the label as it was
        ([0, 1], [3, 1], 1, [1, 3]),
        ([0, 1], [3, 130], 3, [3, 130]),  # one word into a sparse label
        ([0, 63, 65], [*range(10, 75), 130], 3, [10, 73, 130]),  # sparse into sparse
    ],
)
def test_moved_bits_cross_words(spark, bits, remap, words, expected):
    """A label of ``len(remap)`` sources (one word, or sparse indexes above 64) moved into a
    plan of ``words`` words: bit ``i`` lands on ``remap[i]``."""
    if labels.is_sparse(labels.word_count(len(remap))):
        frame = spark.createDataFrame([(bits,)], "_label array<int>")
    else:
        frame = spark.createDataFrame([(labels.mask_words(bits, 1)[0],)], "_label bigint")
    moved = frame.select(labels.derived(F.col(labels.LABEL_COLUMN), remap, words))
    table = moved.toArrow()
    label_type = table.schema.field(labels.LABEL_COLUMN).type
    assert pa.types.is_list(label_type) == labels.is_sparse(words)
    names = [str(i) for i in range(words * 64)]
    assert label_sources(table, names) == [sorted(str(b) for b in expected)]


def test_a_derived_tuple_keeps_its_level_and_a_reader_at_a_level_sees_only_dominated_ones(spark):
    """Upstream runs at {banks: T}: its tuples carry their level. A downstream at {banks: A}
    takes only those A dominates, before its first box, and each result keeps its level."""
    lattice = Lattice.of({"banks": ["A", "B"]})
    a, b = lattice.company_mask("A"), lattice.company_mask("B")
    up = replace(
        validate(load_document(UPSTREAM + "level: {banks: T}\n"), STREAMS),
        clearance=lattice.clearance(("T",)),
    )
    leveled = {"upout": Derived(up.outputs["upout"], up.label_sources, level=True)}
    text = DOWNSTREAM + "level: {banks: A}\n"
    down = replace(
        validate(load_document(text), STREAMS, leveled), clearance=lattice.clearance(("A",))
    )
    data = {"a": [(1, 10.0, a), (2, 20.0, b)], "z": [(3, 30.0, 0)]}
    schema = SCHEMA.spark_type().add(LEVEL_COLUMN, "long")
    up_frames = {
        name: spark.createDataFrame(
            [(at(s), "X", p, lvl) for s, p, lvl in data.get(name, [])], schema=schema
        )
        for name in up.inputs
    }
    (upstream,) = compile_plan(up, up_frames).values()
    assert sorted(upstream.select("price", LEVEL_COLUMN).collect()) == [
        (10.0, a),
        (20.0, b),
        (30.0, 0),
    ]
    inputs = {"d": upstream, "m": spark.createDataFrame([], schema)}
    (out,) = compile_plan(down, inputs).values()
    table = out.toArrow()
    got = zip(
        table["price"].to_pylist(),
        table[LEVEL_COLUMN].to_pylist(),
        label_sources(table, down.label_sources),
        strict=True,
    )
    assert sorted(got) == [(10.0, a, ["a"]), (30.0, 0, ["z"])]  # B's tuple never entered
