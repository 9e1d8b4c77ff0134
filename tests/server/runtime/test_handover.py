"""A batch's hand-over (server/runtime/handover.py) on real Spark: a one-word label leaves the
query narrowed and arrives as the ``bigint`` it was, every bit of it; one outside its plan's
bits fails the batch instead of losing a source; other labels travel as they are."""

from __future__ import annotations

import pyarrow as pa
import pytest
from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException

from boxes.labels import LABEL_COLUMN
from server.runtime.handover import narrowed, narrowest, to_arrow


def labelled(spark, labels: list[int]):
    from pyspark.sql import functions as F

    rows = spark.createDataFrame([(i, label) for i, label in enumerate(labels)], "x long, l long")
    return rows.select("x", F.col("l").alias(LABEL_COLUMN)).orderBy("x")


@pytest.mark.parametrize("sources", [1, 7, 8, 15, 16, 31])
def test_a_one_word_label_arrives_as_the_bigint_it_was_with_every_bit(spark, sources):
    top = 1 << (sources - 1)
    labels = [1, top, (1 << sources) - 1, top | 1, 0 if sources == 1 else top >> 1]
    frame = narrowed(labelled(spark, labels), sources)
    assert frame.schema[LABEL_COLUMN].dataType.simpleString() == narrowest(sources)
    table = to_arrow(frame, 2)
    assert table.schema.field(LABEL_COLUMN).type == pa.int64()
    assert table[LABEL_COLUMN].to_pylist() == labels
    assert table["x"].to_pylist() == list(range(len(labels)))


@pytest.mark.parametrize("outside", [1 << 3, -1])
def test_a_label_outside_its_plans_bits_fails_the_batch_rather_than_lose_a_source(spark, outside):
    frame = narrowed(labelled(spark, [1, outside, 2]), 3)
    with pytest.raises((Py4JJavaError, PySparkException), match="outside its plan's source bits"):
        to_arrow(frame, 2)


def test_wide_labels_and_other_label_shapes_travel_as_they_are(spark):
    from pyspark.sql import functions as F

    wide = labelled(spark, [1 << 40, 3])
    assert narrowest(41) is None and narrowed(wide, 41) is wide
    assert to_arrow(wide, 2)[LABEL_COLUMN].to_pylist() == [1 << 40, 3]
    struct = wide.withColumn(LABEL_COLUMN, F.struct(F.col(LABEL_COLUMN).alias("w0")))
    assert narrowed(struct, 3) is struct
    assert to_arrow(struct, 2)[LABEL_COLUMN].to_pylist() == [{"w0": 1 << 40}, {"w0": 3}]
    unlabelled = wide.drop(LABEL_COLUMN)
    assert narrowed(unlabelled, 3) is unlabelled
    assert to_arrow(unlabelled, 2).column_names == ["x"]
