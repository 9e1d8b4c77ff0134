"""Chinese-Wall security levels (seed 000, section 3; seed 001, section 3) as plain label bits.

Every company of every conflict-of-interest (COI) class gets one bit. A tuple's level label is
the OR of the bits of the companies it derives from, so it merges exactly like a source label
(``bit_or`` in an aggregate, ``|`` in a join). A level vector (Definition 3: per class ⊥, one
company, or T) is read from a mask per class: no bit is ⊥, one bit is that company, two or more
are T. A *clearance* is a level expanded to the companies it covers (T covers its whole class),
and dominance (Definition 4) is then the subset test ``label & ~clearance == 0``: per class, ⊥
is the empty set, a company covers itself, T covers all. The LUB of two levels is the level of
the OR of their expansions (two different companies of a class give T).

Up to 64 companies a label is one ``bigint``. The Spark side is native column expressions only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from boxes import codes
from boxes.errors import InvalidInput

LEVEL_COLUMN = "_level"
BOTTOM = "⊥"
TOP = "T"
MAX_COMPANIES = 64
# One part of a level as the papers write it: an entry (a company, ⊥ or T), by position, or
# ``class: entry`` by name.
_PART = re.compile(r"\s*(?:([A-Za-z0-9_]+)\s*:\s*)?([A-Za-z0-9_]+|⊥)\s*")


def signed(mask: int) -> int:
    """A label's 64 bits as the signed ``bigint`` the ``_level`` column holds."""
    return mask - (1 << 64) if mask >= (1 << 63) else mask


@dataclass(frozen=True)
class Lattice:
    """The COI classes of a configuration, in order, and a bit per company."""

    classes: tuple[tuple[str, tuple[str, ...]], ...]
    bits: Mapping[str, int] = field(init=False, compare=False, repr=False)
    # Bits chosen by whoever keeps the lattice (the catalog never reuses a company's bit, since
    # labels outlive a company); by default the companies are numbered in order.
    assigned: Mapping[str, int] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        bits: dict[str, int] = {}
        names = [name for name, _ in self.classes]
        if len(set(names)) != len(names):
            raise InvalidInput(code=codes.LEVEL_BAD_CLASSES, reason="a class is named twice")
        for name, companies in self.classes:
            if not companies:
                raise InvalidInput(code=codes.LEVEL_BAD_CLASSES, reason=f"{name} has no company")
            for company in companies:
                if company in bits or company in (BOTTOM, TOP):
                    raise InvalidInput(
                        code=codes.LEVEL_BAD_CLASSES,
                        reason=f"company {company!r} is reserved or in two classes",
                    )
                bits[company] = len(bits) if self.assigned is None else self.assigned[company]
        if self.assigned is not None and (
            len(set(bits.values())) != len(bits)
            or not all(0 <= bit < MAX_COMPANIES for bit in bits.values())
        ):
            raise InvalidInput(
                code=codes.LEVEL_BAD_CLASSES, reason="company bits repeat or exceed 63"
            )
        if len(bits) > MAX_COMPANIES:
            raise InvalidInput(
                code=codes.LEVEL_BAD_CLASSES, reason=f"more than {MAX_COMPANIES} companies"
            )
        object.__setattr__(self, "bits", bits)

    @classmethod
    def of(
        cls, classes: Mapping[str, Sequence[str]], bits: Mapping[str, int] | None = None
    ) -> Lattice:
        return cls(tuple((name, tuple(companies)) for name, companies in classes.items()), bits)

    def company_class(self, company: str) -> str | None:
        """The class a company belongs to (None: no such company)."""
        for name, companies in self.classes:
            if company in companies:
                return name
        return None

    def company_mask(self, company: str) -> int:
        return 1 << self.bits[company]

    def class_mask(self, index: int) -> int:
        mask = 0
        for company in self.classes[index][1]:
            mask |= self.company_mask(company)
        return mask

    def clearance(self, level: Sequence[str]) -> int:
        """The mask of the companies a level covers (T covers its class): what it may read."""
        if len(level) != len(self.classes):
            raise InvalidInput(
                code=codes.LEVEL_BAD_SHAPE, reason=f"{len(level)} entries for {len(self.classes)}"
            )
        mask = 0
        for index, (entry, (name, companies)) in enumerate(zip(level, self.classes, strict=True)):
            if entry == TOP:
                mask |= self.class_mask(index)
            elif entry != BOTTOM:
                if entry not in companies:
                    raise InvalidInput(code=codes.LEVEL_UNKNOWN_COMPANY, name=entry, coi=name)
                mask |= self.company_mask(entry)
        return mask

    def named(self, level: Mapping[str, str]) -> tuple[str, ...]:
        """A level given per class name (a class left out is ⊥) as the lattice's vector;
        a class that does not exist is refused (``LEVEL_BAD_SHAPE``)."""
        names = [name for name, _ in self.classes]
        unknown = sorted(set(level) - set(names))
        if unknown:
            raise InvalidInput(
                code=codes.LEVEL_BAD_SHAPE,
                reason=f"no conflict-of-interest class {str(unknown[0])[:64]!r} holds a company",
            )
        return tuple(level.get(name, BOTTOM) for name in names)

    def written(self, text: str) -> tuple[str, ...]:
        """A level as the papers write it: ``[1, ⊥]``, one entry per class in the lattice's
        order, or ``[banks: 1]`` by name (a class left out is ⊥), as CQL writes it."""
        inner = text.strip()
        parts = inner[1:-1].split(",") if inner[:1] == "[" and inner[-1:] == "]" else []
        matched = [_PART.fullmatch(part) for part in parts]
        if not matched or None in matched:
            raise InvalidInput(
                code=codes.LEVEL_BAD_SHAPE,
                reason=f"{text[:64]!r} is not written like [A, ⊥] or [banks: A]",
            )
        named = {m.group(1) for m in matched if m is not None}
        if named == {None}:
            return tuple(m.group(2) for m in matched if m is not None)
        by_name = {m.group(1): m.group(2) for m in matched if m is not None}
        if None in named or len(by_name) != len(matched):
            raise InvalidInput(
                code=codes.LEVEL_BAD_SHAPE,
                reason="name every class once ([banks: A, oil: T]) or none ([A, T])",
            )
        return self.named(by_name)

    def level(self, mask: int) -> tuple[str, ...]:
        """The level vector of a label: per class ⊥, the one company, or T for two or more."""
        out = []
        for _, companies in self.classes:
            present = [c for c in companies if mask & self.company_mask(c)]
            out.append(BOTTOM if not present else present[0] if len(present) == 1 else TOP)
        return tuple(out)

    def dominates(self, high: Sequence[str], low: Sequence[str]) -> bool:
        """``low ≼ high`` (Definition 4) as the subset test on clearances."""
        return self.clearance(low) & ~self.clearance(high) == 0

    def lub(self, *levels: Sequence[str]) -> tuple[str, ...]:
        """The least upper bound of levels: the level of the OR of their clearances."""
        mask = 0
        for level in levels:
            mask |= self.clearance(level)
        return self.level(mask)

    def public(self) -> tuple[str, ...]:
        return tuple(BOTTOM for _ in self.classes)

    def trusted(self) -> tuple[str, ...]:
        return tuple(TOP for _ in self.classes)


def level_column():
    from pyspark.sql import functions as F

    return F.col(LEVEL_COLUMN)


def company_literal(mask: int):
    """The level label of a single-company (or public, mask 0) stream's tuples."""
    from pyspark.sql import functions as F

    return F.lit(signed(mask)).cast("long")


def dominated(clearance: int, label=None):
    """Native predicate ``label ≼ clearance``: no company bit outside the clearance is set."""
    from pyspark.sql import functions as F

    label = level_column() if label is None else label
    return label.bitwiseAND(F.lit(outside(clearance)).cast("long")) == 0


def outside(clearance: int) -> int:
    """The company bits a clearance does not cover, as a signed 64-bit word: a label is
    dominated when it has none of them."""
    return signed(~clearance & ((1 << 64) - 1))


def at_level(frame, clearance: int):
    """Filter before the window (001, section 3): only tuples the query's level dominates."""
    return frame.where(dominated(clearance))


def merge_group():
    """Aggregate expression: a group's level is the LUB (OR) of its tuples' levels."""
    from pyspark.sql import functions as F

    return F.bit_or(level_column())


def merge_pair(left, right):
    """A joined tuple's level: the LUB (OR) of the two sides'."""
    return left.bitwiseOR(right)


def level_word():
    """In a diagram at a level, a tuple's level label: the first word of its label
    (``boxes.labels.with_level``); what ``_level`` reads in an expression."""
    from pyspark.sql import functions as F

    from boxes.labels import LABEL_COLUMN, word_name

    return F.col(LABEL_COLUMN).getField(word_name(0))
