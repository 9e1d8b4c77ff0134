"""Labels as native Spark expressions: literal words, merges, plan-time pruning, no Python UDF."""

from __future__ import annotations

import contextlib
import io

import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, IntegerType, LongType

from boxes import labels
from boxes.compiler import compile_plan
from boxes.document import load_document, validate
from tests.boxes.conftest import at, frames
from tests.paper import as_yaml, q1


def within(readable_bits, words: int):
    """Predicate ``label ⊆ readable``: true iff no bit outside the readable set is set.

    Written as ``(w_k & ~mask_k) = 0`` per word, so that over literal labels Spark folds it at
    plan time; delivery checks labels on Arrow batches (``boxes/secfilter.py``), and this shows
    the literal words leave a Spark-side check that option.
    """
    outside = [~m for m in labels.mask_words(readable_bits, words)]
    tests = [
        word.bitwiseAND(F.lit(m).cast("long")) == 0
        for word, m in zip(labels._parts(labels.label_column(), words), outside, strict=False)
    ]
    result = tests[0]
    for test in tests[1:]:
        result = result & test
    return result


@pytest.mark.parametrize(
    "bits, words, expected",
    [
        ([0], 1, [1]),
        ([63], 1, [-(1 << 63)]),
        ([64], 2, [0, 1]),
        ([0, 63, 64, 199], 4, [1 - (1 << 63), 1, 0, 1 << 7]),
    ],
)
def test_mask_words_are_signed_longs(bits, words, expected):
    assert labels.mask_words(bits, words) == expected


@pytest.mark.parametrize("n, words", [(0, 1), (1, 1), (64, 1), (65, 2), (200, 4)])
def test_word_count(n, words):
    assert labels.word_count(n) == words


def test_literal_and_merges_on_spark(spark):
    """Above 64 sources a label is the sorted set of its bit indexes, merged by union."""
    base = spark.range(2).select(F.col("id").alias("g"))
    a = base.where(F.col("g") == 0).withColumn(labels.LABEL_COLUMN, labels.literal(63, 2))
    b = base.where(F.col("g") == 1).withColumn(labels.LABEL_COLUMN, labels.literal(64, 2))
    both = a.union(b)
    merged = both.groupBy().agg(labels.merge_group(both))
    assert merged.first()[labels.LABEL_COLUMN] == [63, 64]
    assert labels.words_of(merged) == 2
    pair = a.select(labels.merge_pair(F.col(labels.LABEL_COLUMN), labels.literal(0, 2), a))
    assert pair.first()[labels.LABEL_COLUMN] == [0, 63]


def test_a_label_of_up_to_64_sources_is_a_plain_bigint(spark):
    """One word needs no struct: literal, merges and the subset test work on the long itself."""
    label = F.col(labels.LABEL_COLUMN)
    base = spark.range(2).select(F.col("id").alias("g"))
    a = base.where(F.col("g") == 0).withColumn(labels.LABEL_COLUMN, labels.literal(0, 1))
    b = base.where(F.col("g") == 1).withColumn(labels.LABEL_COLUMN, labels.literal(63, 1))
    assert a.schema[labels.LABEL_COLUMN].dataType == LongType() and labels.words_of(a) == 1
    both = a.union(b)
    merged = both.groupBy().agg(labels.merge_group(both))
    assert merged.first()[labels.LABEL_COLUMN] == 1 - (1 << 63)
    assert a.select(labels.merge_pair(label, labels.literal(5, 1), a)).first()[0] == 33
    assert [r["g"] for r in both.where(within([0], 1)).collect()] == [0]
    assert [r["g"] for r in both.where(within([63], 1)).collect()] == [1]
    assert both.where(within([0, 63], 1)).count() == 2


def test_a_wider_label_is_a_sparse_set_of_bit_indexes(spark):
    """A tuple of one of 4096 sources carries one int, not 64 words."""
    frame = spark.range(1).withColumn(labels.LABEL_COLUMN, labels.literal(4000, 64))
    assert frame.schema[labels.LABEL_COLUMN].dataType == ArrayType(IntegerType(), False)
    assert labels.words_of(frame) == 64
    assert frame.first()[labels.LABEL_COLUMN] == [4000]


@pytest.mark.parametrize("words", [1, 3])
@pytest.mark.parametrize("level", [False, True])
def test_raw_and_level_parts_split_off_and_count_window_words_round_trip(spark, words, level):
    """The layout ``[level word], source words, [raw words]`` is the same for dense and sparse
    labels: a count window's words (``split``) and back (``join_words``) keep the label, and
    the output's ``clear_raw``, ``split_raw`` and ``split_level`` take the same parts apart."""
    base = spark.range(1)
    ones = (
        labels.with_head(bit, words, [F.lit(6)], raw=True)
        if level
        else labels.literal(bit, words, raw=True)
        for bit in (0, 64 * words - 1)
    )
    a, b = (base.withColumn(labels.LABEL_COLUMN, one) for one in ones)
    both = a.union(b)
    merged = both.groupBy().agg(labels.merge_group(both))
    assert labels.words_of(merged) == 2 * words + level
    split = merged.select(*labels.split(merged))
    expected = [6] * level + labels.mask_words([0, 64 * words - 1], words) * 2
    assert list(split.first()) == expected
    back = split.select(labels.join_words([F.col(c) for c in split.columns], merged))
    assert back.first()[0] == merged.first()[0]
    raw = labels.split_raw(merged, words)
    cleared = labels.split_raw(labels.clear_raw(merged, words), words)
    if level:
        raw, cleared = (labels.split_level(f, "_level") for f in (raw, cleared))
        assert raw.first()["_level"] == 6
    row, none = raw.first(), cleared.first()
    sources = [0, 64 * words - 1] if words > 1 else labels.mask_words([0, 63], 1)[0]
    assert row[labels.LABEL_COLUMN] == sources == row[labels.RAW_COLUMN]
    assert none[labels.LABEL_COLUMN] == sources
    assert none[labels.RAW_COLUMN] == ([] if words > 1 else 0)


FIGURE_6 = as_yaml(
    q1(
        headless=True,
        boxes={
            "j": {"type": "join", "left": "in1", "right": "in2", "on": ["symbol"], "within": "1s"},
            "f": {"type": "filter", "in": "merged", "where": "price > 1 and symbol like 'A%'"},
            "m": {"type": "map", "in": "f", "fields": {"time": "time", "cents": "price * 100"}},
        },
        outputs={"o2": {"from": "j"}, "o3": {"from": "m"}},
    )
)


def _explain(frame, mode: str = "extended") -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        frame.explain(mode)
    return out.getvalue()


def test_no_python_udf_on_the_tuple_path(spark):
    plan = validate(load_document(FIGURE_6))
    data = {"in1": [{"time": at(1), "symbol": "A", "price": 2.0}], "in2": []}
    for name, frame in compile_plan(plan, frames(spark, plan, data)).items():
        text = _explain(frame)
        assert "BatchEvalPython" not in text and "ArrowEvalPython" not in text, name
        assert "PythonUDF" not in text, name


def test_a_readable_set_known_at_plan_time_prunes_unreadable_inputs(spark):
    """Over literal labels, ``label ⊆ readable`` folds to false on in2's branch of the union."""
    plan = validate(load_document(FIGURE_6))
    inputs = {
        n: spark.range(0, 3, 1, 1).select(
            F.lit(at(1)).alias("time"), F.lit("A").alias("symbol"), F.lit(2.0).alias("price")
        )
        for n in plan.inputs
    }
    frame = compile_plan(plan, inputs)["o3"]
    only_in1 = frame.where(within([plan.inputs.index("in1")], plan.label_words))
    both = frame.where(within([0, 1], plan.label_words))
    assert _explain(only_in1, "simple").count("Range (") == 1
    assert _explain(both, "simple").count("Range (") == 2
    assert only_in1.count() == 3 and both.count() == 6
