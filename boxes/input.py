"""The ``input`` box: a source stream entering the diagram, where its tuples get their label.

Documents declare inputs under ``inputs:``; the registry lists the type so the editor's palette
shows it. Its compile step keeps exactly the schema's columns, applies the watermark on the
event time (so windows and joins downstream can close) and attaches the stream's literal label.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from boxes import arrival, labels, levels
from boxes.base import Box, Kind, Param
from boxes.durations import spark_interval
from boxes.types import Schema


@dataclass(frozen=True)
class InputBox(Box):
    type_name: ClassVar[str] = "input"
    description: ClassVar[str] = "A source stream; every tuple from it is labelled with this stream"
    params: ClassVar[tuple[Param, ...]] = (
        Param(
            "schema",
            Kind.SCHEMA_REF,
            "the stream's schema: a name under 'schemas' or inline "
            "(on the server, the catalog's schema is used and a declared one must match it)",
            required=False,
        ),
        Param(
            "lateness",
            Kind.DURATION,
            "how late a tuple may arrive (in event time) and still "
            "count in windows and joins; the watermark delay",
            required=False,
            default="0s",
        ),
    )

    name: str
    schema: Schema
    bit: int
    words: int
    lateness: float
    arrival: bool = False  # keep each tuple's arrival order (the plan has a count window)

    def attach(self, frame: Any, clearance: int | None = None, raw: bool = False):
        """The caller's DataFrame for this stream, watermarked and labelled (with the raw
        words too if ``raw``: an output downstream has an aggregate-only step; ``labels``).

        With a ``clearance`` (a diagram at a level), only the tuples it dominates enter, before
        any window, join or aggregate (seed 001, section 3), and each keeps its level label
        (column ``_level``, 0 if the frame has none: public) as its label's first word.
        """
        kept = list(self.schema.names)
        if self.arrival:
            frame = arrival.attach(frame)
            kept.append(arrival.ARRIVAL_COLUMN)
        if clearance is None:
            frame = frame.select(*kept)
        else:
            from pyspark.sql import functions as F

            level = (
                F.col(levels.LEVEL_COLUMN)
                if levels.LEVEL_COLUMN in frame.columns
                else F.lit(0).cast("long")
            )
            frame = levels.at_level(
                frame.select(*kept, level.alias(levels.LEVEL_COLUMN)), clearance
            )
        if self.schema.event_time:
            frame = frame.withWatermark(self.schema.event_time, spark_interval(self.lateness))
        if clearance is None:
            return frame.withColumn(labels.LABEL_COLUMN, labels.literal(self.bit, self.words, raw))
        label = labels.with_level(self.bit, self.words, frame[levels.LEVEL_COLUMN], raw)
        return frame.withColumn(labels.LABEL_COLUMN, label).drop(levels.LEVEL_COLUMN)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "bit": self.bit, "lateness": self.lateness}
