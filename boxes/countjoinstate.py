"""A count-bounded join on Spark: ``transformWithStateInPandas`` around ``countjoin.py``.

As a count-window aggregate (``countstate.py``): each side's rows are packed per Arrow batch
into lists (``countstate.pack``), the two sides unioned (each row names its side, the other
side's lists empty), and one stateful step for the whole stream (key ``_all``: a window holds
the side's last n tuples whatever their key) keeps both windows as Arrow IPC blobs in one
value. Timestamps cross as microseconds, so no time zone touches them. Time mode is none and
the output has no event-time column, as a count window's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.types import ArrayType, BinaryType, LongType, StructField, StructType

from boxes import arrival, labels
from boxes.countjoin import CountJoin
from boxes.countstate import from_bytes, pack, to_bytes
from boxes.countwindow import ARRIVAL, TIME, label_name
from boxes.types import DataType

if TYPE_CHECKING:
    from boxes.join import JoinBox

_ALL, _SIDE = "_all", "_side"
_STATE = StructType([StructField("left", BinaryType()), StructField("right", BinaryType())])


def side_column(k: int, i: int) -> str:
    """The step's name for field i of side k (0 left, 1 right)."""
    return f"_{'xy'[k]}{i}"


class CountJoinProcessor(StatefulProcessor):
    """Read both windows, advance them by the batch's tuples of each side, write them back."""

    def __init__(self, spec: CountJoin) -> None:
        self.spec = spec

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.state = handle.getValueState("windows", _STATE)

    def handleInputRows(self, key: Any, rows: Iterator[pd.DataFrame], timerValues) -> Iterator:
        frames = list(rows)
        frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
        # By position after the key: the side, the shared columns, then each side's fields.
        shared = [TIME, ARRIVAL] + [label_name(k) for k in range(self.spec.words)]
        names = [_SIDE, *shared, *self.spec.columns[0], *self.spec.columns[1]]
        first = len(frame.columns) - len(names)
        cells = {n: frame.iloc[:, first + i] for i, n in enumerate(names)}
        sides = cells[_SIDE].to_numpy()
        batches = tuple(
            {n: _joined(cells[n][sides == k]) for n in (*shared, *self.spec.columns[k])}
            for k in (0, 1)
        )
        stored = self.state.get()
        windows = (from_bytes(stored[0]), from_bytes(stored[1])) if stored else self.spec.empty()
        windows, pairs = self.spec.advance(windows, (batches[0], batches[1]))
        self.state.update((to_bytes(windows[0]), to_bytes(windows[1])))
        if len(pairs[label_name(0)]):
            yield pd.DataFrame(pairs)

    def close(self) -> None:
        pass


def _joined(cells: pd.Series) -> np.ndarray:
    """The lists of one column over the batch's packed rows of one side, as one array."""
    arrays = [np.asarray(c) for c in cells]
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)


def compile_count_join(box: JoinBox, left, right):
    """The box's DataFrame: the join's fields in schema order, then the label."""
    from pyspark.sql import functions as F

    assert box.rows is not None
    words = labels.words_of(left)
    sides = ((left, box.left_names), (right, box.right_names))
    types = {f.name: f.type for f in box.schema.fields}
    # A right key's private column has its key's type; it is matched on, never output.
    types.update({o: types[n] for n, o in box.right_names if n in box.on})
    # Per side, (input field, output field, the step's column) of each field.
    fields = [
        [(n, o, side_column(k, i)) for i, (n, o) in enumerate(names)]
        for k, (_, names) in enumerate(sides)
    ]
    columns = (tuple(c for _, _, c in fields[0]), tuple(c for _, _, c in fields[1]))
    step = [{n: c for n, _, c in side} for side in fields]
    keys = (tuple(step[0][f] for f in box.on), tuple(step[1][f] for f in box.on))
    spec = CountJoin(box.rows, words, columns, keys, not left.isStreaming)
    shared = [TIME, ARRIVAL] + [label_name(j) for j in range(words)]
    packed = []
    for k, (frame, _) in enumerate(sides):
        order = arrival.carried(frame) or [F.lit(0).cast("long")]
        time = next(n for n, o, _ in fields[k] if o == box.times[k])
        flat = frame.select(
            F.lit(0).alias(_ALL),
            F.unix_micros(F.col(time)).alias(TIME),
            order[0].alias(ARRIVAL),
            *[w.alias(label_name(j)) for j, w in enumerate(labels.split(frame))],
            *[_to_step(F.col(n), types[o]).alias(c) for n, o, c in fields[k]],
        )
        mine = [*shared, *columns[k]]
        lists = flat.mapInArrow(
            pack([_ALL], mine),
            StructType(
                [flat.schema[_ALL]]
                + [StructField(c, ArrayType(flat.schema[c].dataType)) for c in mine]
            ),
        )
        # The other side's lists are empty: both sides then have one shape, in one order.
        body = {c: F.col(c) for c in mine}
        body.update(
            {
                c: F.array().cast(ArrayType(_step_type(types[o]))).alias(c)
                for _, o, c in fields[1 - k]
            }
        )
        packed.append(
            lists.select(
                _ALL, F.lit(k).alias(_SIDE), *[body[c] for c in (*shared, *columns[0], *columns[1])]
            )
        )
    result = StructType(
        [StructField(c, _step_type(types[o])) for side in fields for _, o, c in side]
        + [StructField(label_name(j), LongType()) for j in range(words)]
    )
    stepped = (
        packed[0]
        .union(packed[1])
        .groupBy(_ALL)
        .transformWithStateInPandas(CountJoinProcessor(spec), result, "Append", "None")
    )
    out = [
        _from_step(F.col(c), types[o]).alias(o)
        for side in fields
        for _, o, c in side
        if o in box.schema.names
    ]
    label = labels.join_words([F.col(label_name(j)) for j in range(words)], left)
    return stepped.select(*out, label)


def _step_type(dtype: DataType):
    """A field's type in the step: a timestamp crosses as microseconds (no time zone)."""
    return LongType() if dtype is DataType.TIMESTAMP else dtype.spark_type()


def _to_step(column, dtype: DataType):
    from pyspark.sql import functions as F

    return F.unix_micros(column) if dtype is DataType.TIMESTAMP else column


def _from_step(column, dtype: DataType):
    from pyspark.sql import functions as F

    return F.timestamp_micros(column) if dtype is DataType.TIMESTAMP else column
