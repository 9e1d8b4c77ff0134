"""A prefix host's split of a batch (server/runtime/overlap.py ``Dispatcher``) on real Spark:
what the output split off the label travels with each residual's rows, mapped or not. A map
that ends a plan replaces the output's fields; ``_level`` dropped with them would leave the
rows without the level that every subscriber's clearance is checked against."""

from __future__ import annotations

from runtime_helpers import plan_of

from boxes.labels import LABEL_COLUMN, RAW_COLUMN
from boxes.levels import LEVEL_COLUMN
from server.runtime import overlap
from server.runtime.outputs import OutputSink


def doc(where: str, project: bool) -> dict:
    boxes: dict = {"kept": {"type": "filter", "in": "in1", "where": where}}
    last = "kept"
    if project:
        fields = {"time": "time", "symbol": "symbol", "price": "price * 2"}
        boxes["doubled"] = {"type": "map", "in": "kept", "fields": fields}
        last = "doubled"
    return {
        "version": 1,
        "name": "d",
        "inputs": {"in1": {}},
        "boxes": boxes,
        "outputs": {"out": {"from": last}},
    }


def test_each_residuals_rows_keep_the_label_and_what_the_output_split_off_it(spark, tmp_path):
    from pyspark.sql import functions as F

    prefix_rows = spark.createDataFrame(
        [("2026-01-01 00:00:00", "ibm", 5.0, 1, 7, 1), ("2026-01-01 00:00:01", "hp", 1.0, 1, 9, 0)],
        "t string, symbol string, price double, label long, level long, raw long",
    ).select(
        F.to_timestamp("t").alias("time"),
        "symbol",
        "price",
        F.col("label").alias(LABEL_COLUMN),
        F.col("raw").alias(RAW_COLUMN),
        F.col("level").alias(LEVEL_COLUMN),
    )
    sinks = {}
    dispatcher = overlap.Dispatcher(2, ["time", "symbol", "price"])
    for project in (False, True):
        cut = overlap.split(plan_of(doc("price > 2", project)))
        assert cut is not None
        _, residual = cut
        sinks[project] = OutputSink(f"r{project}", tmp_path / f"r{project}", 10, 10)
        dispatcher.add(residual, sinks[project])
    dispatcher.handle(prefix_rows, 0)
    for project, sink in sinks.items():
        rows = sink.recent().to_pylist()
        assert [(r["symbol"], r["price"]) for r in rows] == [("ibm", 10.0 if project else 5.0)]
        assert [(r[LABEL_COLUMN], r[RAW_COLUMN], r[LEVEL_COLUMN]) for r in rows] == [(1, 1, 7)]
        assert list(rows[0]) == ["time", "symbol", "price", LABEL_COLUMN, RAW_COLUMN, LEVEL_COLUMN]
