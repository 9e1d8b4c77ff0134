"""Count windows: a window of 100 tuples per key, count and avg, 1,000 keys (issue 14's goal:
100,000 tuples/s on this machine).

Three cases. *Streaming* is the aggregate box as the runtime runs it: a streaming query over
Parquet files (``maxFilesPerTrigger`` one file per micro-batch), ``transformWithStateInPandas``
with RocksDB state, to a no-op sink; timed from the second batch on (the first pays the Python
workers' start). *Ceiling* is the same query with a stateful step that does nothing: what
Spark's stateful Python API itself costs (PySpark 4.3's worker regroups the rows of a
``transformWithStateInPandas`` key by key through ``itertuples``, a Python step per row, before
the step sees a DataFrame). *Core* is ``boxes/countwindow.py`` alone on the same tuples, per
key, without Spark: what the numpy path costs.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from bench import spark_batch
from bench.harness import Mode
from bench.report import Goal, Result, Row
from boxes.compiler import compile_plan
from boxes.countwindow import ARRIVAL, TIME, CountWindow, label_name, value_name
from boxes.document import validate

NAME = "count_window"
KEYS, ROWS = 1000, 100
GOAL = 100_000.0
DOC = {
    "version": 1,
    "name": "cw",
    "schemas": {"s": {"fields": {"t": "timestamp", "k": "long", "v": "double"}, "event_time": "t"}},
    "inputs": {"in1": {"schema": "s"}},
    "boxes": {
        "a": {
            "type": "aggregate",
            "in": "in1",
            "window": {"rows": ROWS},
            "group_by": ["k"],
            "aggregates": {"n": "count()", "mean": "avg(v)"},
        }
    },
    "outputs": {"out": {"from": "a"}},
}


def write_batches(spark, root: Path, batches: int, size: int, keys: int) -> None:
    """``batches`` Parquet files of ``size`` tuples each: ``keys`` keys round-robin, time
    increasing."""
    from pyspark.sql import functions as F

    for b in range(batches):
        base = spark.range(b * size, (b + 1) * size)
        frame = base.select(
            F.timestamp_seconds(base.id / 1000).alias("t"),
            (base.id % keys).alias("k"),
            (base.id % 97 * 0.5).alias("v"),
        )
        frame.coalesce(1).write.parquet(str(root / f"{b:04d}"))


class _Nothing:
    """A stateful step that reads its rows and emits nothing (the API's own cost)."""

    def __new__(cls):
        from pyspark.sql.streaming import StatefulProcessor

        class Nothing(StatefulProcessor):
            def init(self, handle) -> None:
                pass

            def handleInputRows(self, key, rows, timerValues):
                for _ in rows:
                    pass
                return iter(())

            def close(self) -> None:
                pass

        return Nothing()


def streaming(spark, batches: int, size: int, keys: int, ceiling: bool = False) -> float:
    """Tuples per second through the count-window query (or the do-nothing step), from the
    second batch on."""
    plan = validate(DOC)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data = root / "data"
        write_batches(spark, data, batches, size, keys)
        for b in range(batches):  # one directory per batch; the stream reads them as files
            for f in (data / f"{b:04d}").glob("*.parquet"):
                f.rename(data / f"{b:04d}-{f.name}")
        source = (
            spark.readStream.schema(plan.input_schemas["in1"].spark_type())
            .option("maxFilesPerTrigger", 1)
            .parquet(str(data))
        )
        frame = compile_plan(plan, {"in1": source})["out"]
        if ceiling:
            frame = source.groupBy("k").transformWithStateInPandas(
                _Nothing(), "k long", "Append", "None"
            )
        done: list[float] = []
        query = (
            frame.writeStream.foreachBatch(lambda df, _id: (df.count(), done.append(time.time())))
            .option("checkpointLocation", str(root / "ck"))
            .start()
        )
        try:
            query.processAllAvailable()
        finally:
            query.stop()
    return (batches - 1) * size / (done[-1] - done[0])


def core(size: int, keys: int) -> float:
    """Tuples per second through ``CountWindow.advance``, one call per key per batch."""
    spec = CountWindow(ROWS, 1, (("count", None), ("avg", 0)), 1)
    ids = np.arange(size)
    frame = pd.DataFrame(
        {
            TIME: ids * 1000,
            ARRIVAL: ids,
            label_name(0): np.ones(size, dtype=np.int64),
            value_name(0): ids % 97 * 0.5,
            "k": ids % keys,
        }
    )
    groups = [g.drop(columns="k") for _, g in frame.groupby("k")]
    windows = {k: (spec.empty(), 0) for k in range(keys)}
    start = time.perf_counter()
    for k, group in enumerate(groups):
        window, pending = windows[k]
        windows[k] = spec.advance(window, pending, group)[:2]
    return size / (time.perf_counter() - start)


def run(mode: Mode) -> Result:
    spark = spark_batch.session()
    batches, size = mode.pick(4, 4, least=2), mode.tuples(200_000, 1_000_000, least=1_000)
    keys = mode.pick(KEYS, KEYS, least=10)  # the stateful step's cost is per key too
    rate = streaming(spark, batches, size, keys)
    result = Result()
    result.rows.append(
        Row(
            NAME,
            f"count window {ROWS}, count+avg, {keys} keys, streaming ({size:,} per batch)",
            "tuples/s",
            rate,
        )
    )
    result.rows.append(
        Row(
            NAME,
            "same stream, a stateful step that does nothing (ceiling)",
            "tuples/s",
            streaming(spark, batches, size, keys, ceiling=True),
        )
    )
    result.rows.append(
        Row(NAME, f"same, countwindow core alone ({size} tuples)", "tuples/s", core(size, keys))
    )
    result.goals.append(
        Goal(NAME, f"count window >= {GOAL:,.0f} tuples/s", f"{rate:,.0f} tuples/s", rate >= GOAL)
    )
    return result


if __name__ == "__main__":
    import sys

    from bench import report

    out = run(Mode(quick="--full" not in sys.argv))
    print(report.table(out.rows, out.goals))
