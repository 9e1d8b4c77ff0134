"""Chinese-Wall levels as the catalog holds them, and the pure decisions made from them.

No I/O: :class:`LevelPolicy` is part of the catalog snapshot (built from the rows of
``catalog.levels``' tables, swapped in whole with every change), and everything here is a
function of it. The representation is ``boxes.levels``: one bit per company, a level label is
the OR of company bits, a clearance is the mask of the companies a level covers, and dominance
is the subset test.

* A **session's clearance** is the OR of the clearances of its active roles (a role without one
  is cleared for public data only), like its readable set is the union of its roles' reads.
* A **tuple's level** is decided at admission: a company stream's company; a public stream's 0;
  on a multilevel stream the sender's organisation (refused if the sender has none).

>>> from boxes.levels import Lattice
>>> policy = LevelPolicy.make(Lattice.of({"banks": ["A", "B"], "oil": ["X", "Y"]}),
...                           streams={7: "A", 8: None}, organisations={3: "Y"},
...                           clearances={"consultant": {"banks": "A", "oil": "T"}})
>>> bin(policy.clearance({"consultant", "other"}))
'0b1101'
>>> policy.admitted_level(7, user_id=1), policy.admitted_level(8, user_id=3)
(1, 8)
>>> policy.level_of(0b0101)
{'banks': 'A', 'oil': 'X'}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from boxes import codes
from boxes.errors import Denied, InvalidInput
from boxes.levels import BOTTOM, Lattice

PUBLIC = 0
MULTILEVEL = None  # a stream's company when each tuple takes its sender's organisation


@dataclass(frozen=True)
class Decision:
    """Allowed or not, with the reason the audit log records."""

    allowed: bool
    reason: str


@dataclass(frozen=True)
class LevelPolicy:
    """The lattice, the company of each input stream (by object id; ``None``: multilevel; no
    entry: public), each user's organisation (by user id) and each role's clearance."""

    lattice: Lattice
    streams: Mapping[int, str | None]
    organisations: Mapping[int, str]
    clearances: Mapping[str, Mapping[str, str]]
    role_masks: Mapping[str, int] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        masks = {role: self.mask_of(level) for role, level in self.clearances.items()}
        object.__setattr__(self, "role_masks", MappingProxyType(masks))

    @classmethod
    def make(
        cls,
        lattice: Lattice,
        streams: Mapping[int, str | None] | None = None,
        organisations: Mapping[int, str] | None = None,
        clearances: Mapping[str, Mapping[str, str]] | None = None,
    ) -> LevelPolicy:
        return cls(
            lattice,
            MappingProxyType(dict(streams or {})),
            MappingProxyType(dict(organisations or {})),
            MappingProxyType({r: MappingProxyType(dict(v)) for r, v in (clearances or {}).items()}),
        )

    @property
    def configured(self) -> bool:
        """Whether there is any company at all (with none, every level is public)."""
        return bool(self.lattice.bits)

    def vector(self, level: Mapping[str, str]) -> tuple[str, ...]:
        """A level given per class name (a missing class is ⊥) as the lattice's vector.

        Refuses a class that does not exist, and a company not of its class
        (complementing interest, Definition 2).
        """
        names = [name for name, _ in self.lattice.classes]
        unknown = sorted(set(level) - set(names))
        if unknown:
            raise InvalidInput(
                code=codes.LEVEL_BAD_SHAPE,
                reason=f"no conflict-of-interest class {unknown[0][:64]!r} holds a company",
            )
        return tuple(level.get(name, BOTTOM) for name in names)

    def mask_of(self, level: Mapping[str, str]) -> int:
        """The clearance (companies covered) of a level given per class name."""
        return self.lattice.clearance(self.vector(level))

    def level_of(self, label: int) -> dict[str, str]:
        """A label's level per class, without the ⊥ entries (public is ``{}``)."""
        names = [name for name, _ in self.lattice.classes]
        vector = self.lattice.level(label)
        return {name: entry for name, entry in zip(names, vector, strict=True) if entry != BOTTOM}

    def clearance(self, roles: Iterable[str]) -> int:
        """A session's clearance: the OR of its active roles' (a role without one: public)."""
        mask = PUBLIC
        for role in roles:
            mask |= self.role_masks.get(role, PUBLIC)
        return mask

    def dominates(self, clearance: int, label: int) -> Decision:
        """Whether a clearance may read a label (or run at that level): the subset test."""
        outside = label & ~clearance
        if not outside:
            return Decision(True, "dominated")
        return Decision(False, f"level {self.level_of(label)} is not dominated by the clearance")

    def admitted_level(self, stream_id: int, user_id: int) -> int:
        """The level label a tuple gets when ``user_id`` sends it into the stream: never a
        value the sender writes."""
        if stream_id not in self.streams:
            return PUBLIC
        company = self.streams[stream_id]
        if company is MULTILEVEL:
            company = self.organisations.get(user_id)
            if company is None:
                raise Denied(code=codes.LEVEL_NO_ORGANISATION)
        return self.lattice.company_mask(company)


EMPTY = LevelPolicy.make(Lattice(()))
