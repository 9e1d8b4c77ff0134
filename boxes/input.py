"""The ``input`` box: a source stream entering the diagram, where its tuples get their label.

Documents declare inputs under ``inputs:``; the registry lists the type so the editor's palette
shows it. Its compile step keeps exactly the schema's columns, applies the watermark on the
event time (so windows and joins downstream can close) and attaches the stream's literal label.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from boxes import arrival, labels
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

    def attach(self, frame: Any):
        """The caller's DataFrame for this stream, watermarked and labelled."""
        if self.arrival:
            frame = arrival.attach(frame).select(*self.schema.names, arrival.ARRIVAL_COLUMN)
        else:
            frame = frame.select(*self.schema.names)
        if self.schema.event_time:
            frame = frame.withWatermark(self.schema.event_time, spark_interval(self.lateness))
        return frame.withColumn(labels.LABEL_COLUMN, labels.literal(self.bit, self.words))

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "bit": self.bit, "lateness": self.lateness}
