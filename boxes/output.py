"""The ``output`` box: a named result stream; subscribers read it through the SecFilter."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from boxes import labels
from boxes.base import Box, Kind, Param
from boxes.types import Schema


@dataclass(frozen=True)
class OutputBox(Box):
    type_name: ClassVar[str] = "output"
    description: ClassVar[str] = "A named result stream that users subscribe to"
    params: ClassVar[tuple[Param, ...]] = (
        Param("from", Kind.INPUT_REF, "the input or box whose tuples this output carries"),
    )

    name: str
    schema: Schema
    source: str

    @property
    def upstream(self) -> tuple[str, ...]:
        return (self.source,)

    def compile(self, frames: Mapping[str, Any]):
        """The user fields in schema order, then the label; nothing else leaves the diagram."""
        return frames[self.source].select(*self.schema.names, labels.LABEL_COLUMN)
