"""The ``map`` box: computes new fields from each tuple; only the named fields come out.

The output keeps an event time when one of its fields is the input's event-time field passed
through unchanged (``t: time``), so windows and joins can still follow a map.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from boxes import arrival, codes
from boxes.base import Kind, Operator, Param, Problems
from boxes.expressions import CheckedExpr, check_expression
from boxes.labels import LABEL_COLUMN
from boxes.lineage import Lineage
from boxes.types import Field, Schema


@dataclass(frozen=True)
class MapBox(Operator):
    type_name: ClassVar[str] = "map"
    description: ClassVar[str] = (
        "Compute named fields from each tuple (a projection); the label is unchanged"
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param("in", Kind.INPUT_REF, "the input or box to read"),
        Param(
            "fields", Kind.EXPRESSIONS, "output field name: expression, e.g. {cents: price * 100}"
        ),
    )

    name: str
    schema: Schema
    source: str
    exprs: tuple[tuple[str, CheckedExpr], ...]
    time_source: str | None  # the input's event-time field, if passed on as schema.event_time

    @classmethod
    def build(
        cls, name: str, args: Mapping[str, Any], upstream: Mapping[str, Schema], path: str
    ) -> MapBox:
        schema = upstream[args["in"]]
        problems = Problems()
        if not args["fields"]:
            problems.add(
                codes.MISSING_PARAMETER, f"{path}.fields", "a map needs at least one field"
            )
        exprs = [
            (field, problems.collect(check_expression, text, schema, f"{path}.fields.{field}"))
            for field, text in args["fields"].items()
        ]
        problems.raise_any()
        event_time = next(
            (
                field
                for field, text in args["fields"].items()
                if schema.event_time and text.strip() == schema.event_time
            ),
            None,
        )
        out = Schema(tuple(Field(f, e.type) for f, e in exprs), event_time)
        return cls(name, out, args["in"], tuple(exprs), schema.event_time if event_time else None)

    @property
    def upstream(self) -> tuple[str, ...]:
        return (self.source,)

    def lineage(self, upstream: Mapping[str, Lineage]) -> Lineage:
        """Each field from the fields its expression reads (none: a constant)."""
        up = upstream[self.source]
        return Lineage({f: up.of(e.fields) for f, e in self.exprs}, up.rows)

    def compile(self, frames: Mapping[str, Any]):
        from pyspark.sql import functions as F

        # The event time is selected as the column itself so its watermark metadata survives.
        columns = [
            (
                F.col(self.time_source)
                if self.time_source and field == self.schema.event_time
                else e.to_column()
            ).alias(field)
            for field, e in self.exprs
        ]
        frame = frames[self.source]
        return frame.select(*columns, *arrival.carried(frame), F.col(LABEL_COLUMN))
