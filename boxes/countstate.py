"""A count-window aggregate on Spark: ``transformWithStateInPandas`` around ``countwindow.py``.

Spark has no count window; its stateful API gives each group's new rows as pandas batches
(Arrow underneath) and keeps state per group. The state is one value per group: the window's
rows as one Arrow IPC blob and the count of tuples entered since the last result, so a batch
costs one read and one write of state per group, whatever its size (a list state would cost
a call per row). The argument of every aggregate is computed by Spark before the step, from the
checked expression tree (never from text); the step only sees numbers, times and label words.

Time mode is none (the window is ordered by event time itself, not by timers), and the output
has no event-time column: Spark refuses a result behind the watermark there, and a quiet
group's newest tuple may well be.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    LongType,
    StructField,
    StructType,
    TimestampType,
)

from boxes import arrival, labels
from boxes.arrowipc import ipc_bytes
from boxes.countgroups import GroupedCountWindow, key_name
from boxes.countwindow import ARRIVAL, KEEP, TIME, CountWindow, Rows, label_name, value_name

if TYPE_CHECKING:
    from boxes.aggregate import AggregateBox

_ALL = "_all"  # the one key of a window over the whole stream (no group_by)
# The window's rows, the tuples entered since the last result and, for a window over the whole
# stream that is then grouped, the relation of the last result (countgroups.py).
_STATE = StructType(
    [
        StructField("rows", BinaryType()),
        StructField("pending", LongType()),
        StructField("relation", BinaryType()),
    ]
)


def to_bytes(window: Rows) -> bytes:
    return ipc_bytes(pa.table({name: pa.array(values) for name, values in window.items()}))


def from_bytes(blob: bytes) -> Rows:
    table = pa.ipc.open_stream(blob).read_all()
    return {
        n: c.to_numpy(zero_copy_only=False)
        for n, c in zip(table.column_names, table.columns, strict=True)
    }


class CountWindowProcessor(StatefulProcessor):
    """Per group: read the window, advance it by the group's new rows, write it back."""

    def __init__(
        self,
        spec: CountWindow,
        keys: tuple[str, ...],
        names: tuple[str, ...],
        grouped: GroupedCountWindow | None = None,
    ):
        self.spec, self.keys, self.names, self.grouped = spec, keys, names, grouped

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.state = handle.getValueState("window", _STATE)

    def handleInputRows(self, key: Any, rows: Iterator[pd.DataFrame], timerValues) -> Iterator:
        frames = list(rows)
        frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
        # Spark hands the columns over by position (named _1, _2, ... after the keys); each
        # cell holds the group's tuples of one packed Arrow batch (``pack``).
        names = self.spec.columns
        first = len(frame.columns) - len(names)
        batch = {n: np.concatenate(list(frame.iloc[:, first + i])) for i, n in enumerate(names)}
        stored = self.state.get()
        window, pending = (from_bytes(stored[0]), stored[1]) if stored else (self.spec.empty(), 0)
        if self.grouped is None:
            window, pending, results = self.spec.advance(window, pending, batch)
            self.state.update((to_bytes(window), pending, None))
        else:
            relation = from_bytes(stored[2]) if stored else self.grouped.empty_relation()
            window, pending, relation, results = self.grouped.advance(
                window, pending, relation, batch
            )
            self.state.update((to_bytes(window), pending, to_bytes(relation)))
        if len(results["window_end"]):
            yield self.output(key, results)

    def output(self, key: Any, results: Rows) -> pd.DataFrame:
        count = len(results["window_end"])
        if self.grouped is None:
            out: dict[str, Any] = {n: [v] * count for n, v in zip(self.keys, key, strict=False)}
        else:  # one window for the stream: each row names its group
            out = {n: results[key_name(k)] for k, n in enumerate(self.keys)}
        for end in ("window_start", "window_end"):
            out[end] = results[end].astype("int64").view("datetime64[us]")
        for k, name in enumerate(self.names):
            out[name] = results[f"agg{k}"]
        for k in range(self.spec.words):
            out[label_name(k)] = results[label_name(k)].astype("int64")
        return pd.DataFrame(out)

    def close(self) -> None:
        pass


def pack(keys: list[str], columns: list[str]):
    """A ``mapInArrow`` step: each Arrow batch becomes one row per group whose cells are lists
    of that group's values. PySpark 4.3 hands a ``transformWithStateInPandas`` step its rows
    through ``itertuples``, a Python step per row; packed, that is a step per group and batch,
    and the tuples themselves travel as Arrow lists (pyarrow groups them in C++)."""

    def packed(batches):
        for batch in batches:
            if batch.num_rows:
                table = pa.Table.from_batches([batch])
                grouped = table.group_by(keys, use_threads=False).aggregate(
                    [(c, "list") for c in columns]
                )
                yield from grouped.select(keys + [f"{c}_list" for c in columns]).to_batches()

    return packed


def compile_count_window(box: AggregateBox, frame):
    """The box's DataFrame: results in schema order, then the label."""
    from pyspark.sql import functions as F

    assert box.rows is not None
    words = labels.words_of(frame)
    # Partitioned: Spark groups by the group-by fields and each group has its window. Else one
    # window for the whole stream (key _ALL) keeps the group-by fields in its rows.
    partitioned = box.partitioned and bool(box.group_by)
    carried = () if partitioned else tuple(key_name(k) for k in range(len(box.group_by)))
    spec = CountWindow(
        box.rows,
        box.row_slide,
        tuple(
            (agg.function, k if agg.argument is not None else None)
            for k, (_, agg) in enumerate(box.aggregates)
        ),
        words,
        replay=not frame.isStreaming,
        carried=carried,
        where=box.where is not None,
        keyed=partitioned,
    )
    grouped = GroupedCountWindow(spec, len(carried)) if carried else None
    order = arrival.carried(frame) or [F.lit(0).cast("long")]
    keys = list(box.group_by) if partitioned else [_ALL]
    columns = (
        ([F.col(g) for g in box.group_by] if partitioned else [F.lit(0).alias(_ALL)])
        + [F.unix_micros(F.col(box.time)).alias(TIME), order[0].alias(ARRIVAL)]
        + [w.alias(label_name(k)) for k, w in enumerate(labels.split(frame))]
        + [
            agg.argument.to_column().alias(value_name(k))
            for k, (_, agg) in enumerate(box.aggregates)
            if agg.argument is not None
        ]
        + [F.col(g).alias(name) for g, name in zip(box.group_by, carried, strict=False)]
        + (
            [F.coalesce(box.where.to_column(), F.lit(False)).alias(KEEP)]
            if box.where is not None
            else []
        )
    )
    by_name = {f.name: f for f in box.schema.fields}
    result = StructType(
        [StructField(g, by_name[g].type.spark_type()) for g in box.group_by]
        + [StructField(n, TimestampType()) for n in ("window_start", "window_end")]
        + [StructField(n, agg.type.spark_type()) for n, agg in box.aggregates]
        + [StructField(label_name(k), LongType()) for k in range(words)]
    )
    processor = CountWindowProcessor(
        spec, tuple(box.group_by), tuple(name for name, _ in box.aggregates), grouped
    )
    flat = frame.select(*columns)
    packed_schema = StructType(
        [flat.schema[k] for k in keys]
        + [StructField(c, ArrayType(flat.schema[c].dataType)) for c in spec.columns]
    )
    stepped = (
        flat.mapInArrow(pack(keys, spec.columns), packed_schema)
        .groupBy(*keys)
        .transformWithStateInPandas(processor, result, "Append", "None")
    )
    label = labels.join_words([F.col(label_name(k)) for k in range(words)], frame)
    return stepped.select(*box.schema.names, label)
