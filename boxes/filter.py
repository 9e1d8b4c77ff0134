"""The ``filter`` box: keeps the tuples for which a predicate is true (NULL counts as false)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from boxes.base import Kind, Operator, Param, Problems
from boxes.expressions import CheckedExpr, check_predicate
from boxes.lineage import Lineage
from boxes.types import Schema


@dataclass(frozen=True)
class FilterBox(Operator):
    type_name: ClassVar[str] = "filter"
    description: ClassVar[str] = "Keep the tuples that satisfy a condition; the label is unchanged"
    params: ClassVar[tuple[Param, ...]] = (
        Param("in", Kind.INPUT_REF, "the input or box to read"),
        Param("where", Kind.PREDICATE, "the condition a tuple must satisfy, e.g. price > 10"),
    )

    name: str
    schema: Schema
    source: str
    where: CheckedExpr

    @classmethod
    def build(
        cls, name: str, args: Mapping[str, Any], upstream: Mapping[str, Schema], path: str
    ) -> FilterBox:
        schema = upstream[args["in"]]
        problems = Problems()
        where = problems.collect(check_predicate, args["where"], schema, f"{path}.where")
        problems.raise_any()
        return cls(name, schema, args["in"], where)

    @property
    def upstream(self) -> tuple[str, ...]:
        return (self.source,)

    def lineage(self, upstream: Mapping[str, Lineage]) -> Lineage:
        """Fields pass unchanged; the condition's fields decide which tuples pass."""
        up = upstream[self.source]
        return Lineage(up.columns, up.rows | up.of(self.where.fields))

    def compile(self, frames: Mapping[str, Any]):
        from pyspark.sql import functions as F

        return frames[self.source].where(F.coalesce(self.where.to_column(), F.lit(False)))
