"""The ``aggregate`` box: event-time windows (tumbling or sliding), grouped, with aggregates.

Output fields: ``window_start``, ``window_end``, the group-by fields, then the aggregates. The
label of a result is the OR of the labels of the tuples in its group. A window's result is
emitted once the watermark passes its end (append mode) and its event time is ``window_end``:
the moment the result is complete. That field carries the watermark, so another aggregate or
a join can follow; a result never falls behind the watermark downstream, as it would if it were
timed at ``window_start``. A window [20s, 30s) chained into 30 s windows lands in [30s, 60s).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from boxes import codes, labels
from boxes.base import Kind, Operator, Param, Problems
from boxes.durations import duration_of, spark_interval
from boxes.expressions import CheckedAggregate, check_aggregate
from boxes.types import DataType, Field, Schema

WINDOW_FIELDS = ("window_start", "window_end")
# Spark's key for the event-time delay of a watermarked column.
_WATERMARK_DELAY = "spark.watermarkDelayMs"


@dataclass(frozen=True)
class AggregateBox(Operator):
    type_name: ClassVar[str] = "aggregate"
    description: ClassVar[str] = (
        "Aggregate tuples per event-time window and group; "
        "a result's label is the OR of its group's labels"
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param("in", Kind.INPUT_REF, "the input or box to read (it needs an event time)"),
        Param(
            "window",
            Kind.WINDOW,
            "the event-time window",
            params=(
                Param("size", Kind.DURATION, "the window length, e.g. 10s"),
                Param(
                    "slide",
                    Kind.DURATION,
                    "how far each window starts after the previous "
                    "(omit for tumbling windows: slide = size)",
                    required=False,
                ),
            ),
        ),
        Param(
            "group_by",
            Kind.FIELD_LIST,
            "the fields whose values form a group",
            required=False,
            default=[],
        ),
        Param(
            "aggregates",
            Kind.AGGREGATES,
            "output field name: count(), count(x), sum(x), avg(x), min(x) or max(x)",
        ),
    )

    name: str
    schema: Schema
    source: str
    time: str
    size: float
    slide: float
    group_by: tuple[str, ...]
    aggregates: tuple[tuple[str, CheckedAggregate], ...]

    @classmethod
    def build(
        cls, name: str, args: Mapping[str, Any], upstream: Mapping[str, Schema], path: str
    ) -> AggregateBox:
        schema = upstream[args["in"]]
        problems = Problems()
        if schema.event_time is None:
            problems.add(
                codes.NO_EVENT_TIME,
                f"{path}.in",
                f"{args['in']!r} has no event time; windows need one",
            )
        size = duration_of(args["window"]["size"])
        slide = duration_of(args["window"].get("slide") or args["window"]["size"])
        if size == 0 or slide == 0 or slide > size:
            problems.add(
                codes.INVALID_DURATION,
                f"{path}.window",
                "a window's size and slide must be positive, with slide <= size",
            )
        group_by = tuple(args["group_by"])
        out: list[Field] = [Field(n, DataType.TIMESTAMP) for n in WINDOW_FIELDS]
        for i, field in enumerate(group_by):
            dtype = schema.type_of(field)
            if dtype is None:
                problems.add(
                    labels.missing_field_code(field),
                    f"{path}.group_by.{i}",
                    f"no field {field!r} in {args['in']!r}; fields: {', '.join(schema.names)}",
                )
            else:
                out.append(Field(field, dtype))
        aggregates = []
        for field, text in args["aggregates"].items():
            checked = problems.collect(check_aggregate, text, schema, f"{path}.aggregates.{field}")
            if checked is not None:
                aggregates.append((field, checked))
                out.append(Field(field, checked.type))
        if not args["aggregates"]:
            problems.add(
                codes.MISSING_PARAMETER,
                f"{path}.aggregates",
                "an aggregate needs at least one aggregate",
            )
        _check_unique(out, f"{path}.aggregates", problems)
        problems.raise_any()
        assert schema.event_time is not None  # NO_EVENT_TIME otherwise
        return cls(
            name,
            Schema(tuple(out), "window_end"),
            args["in"],
            schema.event_time,
            size,
            slide,
            group_by,
            tuple(aggregates),
        )

    @property
    def upstream(self) -> tuple[str, ...]:
        return (self.source,)

    def compile(self, frames: Mapping[str, Any]):
        from pyspark.sql import functions as F

        window = F.window(self.time, spark_interval(self.size), spark_interval(self.slide))
        grouped = (
            frames[self.source]
            .groupBy(window.alias("window"), *self.group_by)
            .agg(
                *[a.to_column().alias(field) for field, a in self.aggregates],
                labels.merge_group(labels.words_of(frames[self.source])).alias(labels.LABEL_COLUMN),
            )
        )
        return grouped.select(
            F.col("window.start").alias("window_start"),
            F.col("window.end").alias("window_end", metadata={_WATERMARK_DELAY: 0}),
            *self.group_by,
            *[field for field, _ in self.aggregates],
            labels.LABEL_COLUMN,
        )


def _check_unique(fields: list[Field], path: str, problems: Problems) -> None:
    seen: set[str] = set()
    for f in fields:
        if f.name in seen:
            problems.add(
                codes.DUPLICATE_FIELD, path, f"the output would have two fields named {f.name!r}"
            )
        seen.add(f.name)
