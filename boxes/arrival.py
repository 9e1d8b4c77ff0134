"""Arrival order: the reserved column that numbers an input's tuples in the order they came.

A count window holds the N most recent tuples by event time, and CQL breaks ties by arrival
order, which event time alone cannot give. The ingestion log numbers every stream's rows, so
the server's source hands that number on as ``_arrival`` (``server/runtime/source.py``); a
batch run (``sluice run``, tests) numbers its rows in file order instead. Only a plan with a
count window carries the column (``Plan.arrival``): every other diagram stays as narrow as
before. Row-preserving boxes (filter, map, union) pass it on; a join or a time window makes
new tuples, which have no arrival of their own, so a count window after one breaks ties in
the order tuples reach it.

Across the streams of a union, numbers from different logs are compared as they are: the
order is total and deterministic, but it is each stream's own order, not a shared clock.
"""

from __future__ import annotations

ARRIVAL_COLUMN = "_arrival"


def attach(frame):
    """``frame`` with ``_arrival``: the log's row number if the source gave one, else in a batch
    the row's position (Spark numbers a batch DataFrame's rows in partition order: file order).
    Another streaming source has no numbers (Spark cannot number a stream's rows): 0, so ties
    are broken in the order tuples reach the window."""
    from pyspark.sql import functions as F

    if ARRIVAL_COLUMN in frame.columns:
        return frame
    number = F.lit(0).cast("long") if frame.isStreaming else F.monotonically_increasing_id()
    return frame.withColumn(ARRIVAL_COLUMN, number)


def carried(frame) -> list:
    """The arrival column to pass on, if ``frame`` has one (empty otherwise)."""
    from pyspark.sql import functions as F

    return [F.col(ARRIVAL_COLUMN)] if ARRIVAL_COLUMN in frame.columns else []
