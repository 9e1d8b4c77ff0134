"""One micro-batch through a compiled diagram, done as the runtime's output sink does it.

The runtime's ``foreachBatch`` turns each micro-batch into Arrow (``coalesce`` to the
cores, ``toArrow``; a one-word label leaves the query narrowed and is widened back:
``server/runtime/handover.py``) and the delivery path runs the SecFilter over it. Here the same plan
runs on an in-memory batch DataFrame, so what is timed is plan execution, the Arrow hand-over
and the filter, without ingestion or trigger scheduling (the end-to-end experiment has those).

"Unsecured" is the same compiled plan with the label column dropped before the sink:
Catalyst's column pruning then removes every label expression (literals, copies, ORs), so
the plan is what Sluice would run without labels, and no SecFilter runs.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np

from boxes.compiler import compile_plan
from boxes.document import Plan, validate
from boxes.labels import LABEL_COLUMN
from boxes.secfilter import deliveries, readable_mask
from boxes.types import parse_schema
from server.runtime.handover import narrowed, to_arrow

FIELDS = {"x": "long", "price": "double", "symbol": "string"}
SCHEMA, _ = parse_schema({"fields": FIELDS}, "bench")
CORES = 2


def session():
    """The bench process's one SparkSession (Sluice's settings, two local cores); a heap big
    enough for a million tuples with wide labels collected at once."""
    from server.runtime.spark import build_session

    return build_session(f"local[{CORES}]", {"spark.driver.memory": "4g"}, app_name="sluice-bench")


def rows(spark, count: int, streams: int = 1):
    """``count`` generated rows of ``SCHEMA``, made in the JVM; with ``_stream`` numbering
    ``streams`` contiguous blocks when several inputs are to be cut out of it."""
    from pyspark.sql import functions as F

    base = spark.range(count)
    columns = [
        base.id.alias("x"),
        (base.id % 1000 * 0.5).alias("price"),
        F.concat(F.lit("s"), (base.id % 100).cast("string")).alias("symbol"),
    ]
    if streams > 1:
        columns.append((base.id * streams / max(count, 1)).cast("int").alias("_stream"))
    return base.select(*columns)


def plan_of(doc: Mapping) -> Plan:
    return validate(doc, {name: SCHEMA for name in doc["inputs"]})


class Variants:
    """A plan compiled once, runnable secured (labels + SecFilter) or unsecured (neither)."""

    def __init__(self, plan: Plan, inputs: Mapping, mask: np.ndarray | None = None) -> None:
        """``mask``: the subscriber's readable set (default: every input of the plan)."""
        (compiled,) = compile_plan(plan, inputs).values()
        self.secured_frame = narrowed(compiled, len(plan.label_sources))  # as the runtime runs it
        self.unsecured_frame = compiled.drop(LABEL_COLUMN)
        self.mask = readable_mask(plan.inputs, plan.inputs) if mask is None else mask
        self.filter_seconds: list[float] = []

    def secured(self) -> int:
        table = to_arrow(self.secured_frame, CORES)
        start = time.perf_counter()
        (delivered,) = deliveries(table, [self.mask])
        self.filter_seconds.append(time.perf_counter() - start)
        return len(delivered)

    def filter_ms(self) -> float:
        """Median milliseconds the SecFilter took of the secured runs so far."""
        return 1e3 * float(np.median(self.filter_seconds))

    def unsecured(self) -> int:
        return self.unsecured_frame.coalesce(CORES).toArrow().num_rows
