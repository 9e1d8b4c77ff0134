"""An output's label bits by name: which input each bit stands for and its catalog source.

Delivery, the relay and a preview read a result's labels through this, and each delivered
tuple names the inputs in its label under ``SOURCES``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from boxes.document import Plan
from boxes.secfilter import Rights, readable_mask

SOURCES = "_sources"  # each delivered tuple's input names, beside its fields


@dataclass(frozen=True)
class Labels:
    """How an output's label bits map to input names and catalog source indexes."""

    inputs: tuple[str, ...]  # bit i of a label <=> inputs[i]
    sources: Mapping[str, int]  # input name -> its catalog source index
    leveled: bool = False  # the output's diagram runs at a level: its rows must carry _level

    @classmethod
    def of(cls, plan: Plan, sources: Mapping[str, int]) -> Labels:
        """The labels of ``plan``'s outputs, its streams' catalog source indexes ``sources``."""
        return cls(plan.label_sources, dict(sources), plan.clearance is not None)

    def names(self, readable: int) -> tuple[str, ...]:
        """The inputs whose catalog sources ``readable`` (source bits) holds."""
        return tuple(n for n in self.inputs if readable >> self.sources[n] & 1)

    def mask(self, readable: int):
        return readable_mask(self.inputs, self.names(readable))

    def rights(self, tuples: int, aggregates: int) -> Rights:
        """Catalog source bits (READ_TUPLE, READ_AGGREGATE) as rights over this label."""
        return Rights(self.mask(tuples), self.mask(tuples | aggregates))
