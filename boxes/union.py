"""The ``union`` box: merges two or more streams of one schema; each tuple keeps its label."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from boxes import codes
from boxes.arrival import ARRIVAL_COLUMN
from boxes.base import Kind, Operator, Param, Problems
from boxes.labels import LABEL_COLUMN
from boxes.lineage import Lineage
from boxes.types import Schema


@dataclass(frozen=True)
class UnionBox(Operator):
    type_name: ClassVar[str] = "union"
    description: ClassVar[str] = "Merge streams that share one schema; labels are kept"
    params: ClassVar[tuple[Param, ...]] = (
        Param("in", Kind.INPUT_REFS, "two or more inputs or boxes with the same schema"),
    )

    name: str
    schema: Schema
    sources: tuple[str, ...]

    @classmethod
    def build(
        cls, name: str, args: Mapping[str, Any], upstream: Mapping[str, Schema], path: str
    ) -> UnionBox:
        sources = tuple(args["in"])
        problems = Problems()
        if len(sources) < 2:
            problems.add(codes.TOO_FEW_INPUTS, f"{path}.in", "a union needs two or more inputs")
        elif len(set(sources)) < len(sources):
            problems.add(codes.DUPLICATE_NAME, f"{path}.in", "a union names the same input twice")
        first = upstream[sources[0]] if sources else None
        for i, source in enumerate(sources[1:], start=1):
            if upstream[source] != first:
                problems.add(
                    codes.SCHEMA_MISMATCH,
                    f"{path}.in.{i}",
                    f"{source!r} has schema {_show(upstream[source])} but "
                    f"{sources[0]!r} has {_show(upstream[sources[0]])}; "
                    "a union needs one schema",
                )
        problems.raise_any()
        assert first is not None  # TOO_FEW_INPUTS otherwise
        return cls(name, first, sources)

    @property
    def upstream(self) -> tuple[str, ...]:
        return self.sources

    def lineage(self, upstream: Mapping[str, Lineage]) -> Lineage:
        """A field from that field of every branch."""
        ups = [upstream[s] for s in self.sources]
        columns = {f: frozenset().union(*(u.columns[f] for u in ups)) for f in self.schema.names}
        return Lineage(columns, frozenset().union(*(u.rows for u in ups)))

    def compile(self, frames: Mapping[str, Any]):
        # Every branch has the same columns in the same order (one schema, then the label), so
        # the positional union is right; pairing branches keeps the plan shallow for wide unions.
        branches = [frames[s] for s in self.sources]
        if len({ARRIVAL_COLUMN in b.columns for b in branches}) > 1:
            # A join's or a window's results have no arrival order: then no branch keeps one.
            branches = [b.select(*self.schema.names, LABEL_COLUMN) for b in branches]
        while len(branches) > 1:
            pairs = zip(branches[0::2], branches[1::2], strict=False)
            branches = [a.union(b) for a, b in pairs] + branches[
                len(branches) - len(branches) % 2 :
            ]
        return branches[0]


def _show(schema: Schema) -> str:
    fields = ", ".join(f"{f.name}: {f.type.value}" for f in schema.fields)
    time = f" (event time {schema.event_time})" if schema.event_time else ""
    return "{" + fields + "}" + time
