"""The ``output`` box: a named result stream; subscribers read it through the SecFilter.

Its ``semantic`` (Borealis' Figure 7) is how the SecFilter judges a tuple derived from several
sources: ``strong`` (the default) delivers it only to a subscriber who may read every source,
``weak`` to one who may read any of them (``boxes/secfilter.py``, ``docs/labels.md``). Only the
output's owner writes it: the output is created by the diagram document that declares it, and
only the diagram's owner role may create or replace that document.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from boxes import labels
from boxes.base import Box, Kind, Param
from boxes.types import Schema

STRONG, WEAK = "strong", "weak"


@dataclass(frozen=True)
class OutputBox(Box):
    type_name: ClassVar[str] = "output"
    description: ClassVar[str] = "A named result stream that users subscribe to"
    params: ClassVar[tuple[Param, ...]] = (
        Param("from", Kind.INPUT_REF, "the input or box whose tuples this output carries"),
        Param(
            "semantic",
            Kind.CHOICE,
            "who receives a tuple derived from several streams: strong (the default), a "
            "subscriber who may read all of them; weak, one who may read any of them",
            required=False,
            default=STRONG,
            choices=(STRONG, WEAK),
        ),
    )

    name: str
    schema: Schema
    source: str
    semantic: str = STRONG

    @property
    def upstream(self) -> tuple[str, ...]:
        return (self.source,)

    def describe(self) -> dict[str, Any]:
        """Shown when weak (the default goes without saying, and keeps plans' fingerprints)."""
        described = super().describe()
        return {**described, "semantic": WEAK} if self.semantic == WEAK else described

    def compile(self, frames: Mapping[str, Any]):
        """The user fields in schema order, then the label; nothing else leaves the diagram."""
        return frames[self.source].select(*self.schema.names, labels.LABEL_COLUMN)
