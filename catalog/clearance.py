"""Chinese-Wall levels as the catalog holds them, and the pure decisions made from them.

No I/O: :class:`LevelPolicy` is part of the catalog snapshot (built from the rows of
``catalog.levels``' tables, swapped in whole with every change), and everything here is a
function of it. The representation is ``boxes.levels``: one bit per company, a level label is
the OR of company bits, a clearance is the mask of the companies a level covers, and dominance
is the subset test.

* A **session's clearance** is the OR (the union of the companies covered) of the clearances
  of its active roles (a role without one is cleared for public data only), as its readable
  set is the union of its roles' READ_TUPLE sources: a session is cleared for what any of its
  roles is, and an administrator who gives one user roles cleared for competing companies
  breaches the wall by that assignment.
* A **tuple's level** is decided at admission (:class:`Admission`): a company stream's
  company; a public stream's 0; on a multilevel stream (001's trusted stream) the level the
  tuple states, if its sender's clearance or organisation dominates it, else the sender's
  organisation (refused if the sender has none).

>>> from boxes.levels import Lattice
>>> policy = LevelPolicy.make(Lattice.of({"banks": ["A", "B"], "oil": ["X", "Y"]}),
...                           streams={7: "A", 8: None}, organisations={3: "Y"},
...                           clearances={"consultant": {"banks": "A", "oil": "T"}})
>>> bin(policy.clearance({"consultant", "other"}))
'0b1101'
>>> policy.admission(7, user_id=1, clearance=0).level(0), policy.admission(8, 3, 0).level(0)
(1, 8)
>>> policy.admission(8, 3, clearance=0b0001).level(0, "[A, Y]")
9
>>> policy.level_of(0b0101)
{'banks': 'A', 'oil': 'X'}
"""

from __future__ import annotations

import json
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

    def mask_of(self, level: Mapping[str, str]) -> int:
        """The clearance (companies covered) of a level given per class name."""
        return self.lattice.clearance(self.lattice.named(level))

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

    def admission(self, stream_id: int | None, user_id: int, clearance: int) -> Admission:
        """How the tuples a user sends into a stream get their level, for a sender whose
        session has ``clearance`` (``None``: no such stream, which the log refuses)."""
        if stream_id is None or stream_id not in self.streams:
            return Admission(self, PUBLIC, None)
        company = self.streams[stream_id]
        if company is not MULTILEVEL:
            return Admission(self, self.lattice.company_mask(company), None)
        organisation = self.organisations.get(user_id)
        own = PUBLIC if organisation is None else self.lattice.company_mask(organisation)
        return Admission(self, None if organisation is None else own, clearance | own)

    def stated(self, level: object) -> int:
        """The label of a level a sender states: per class (``{"banks": "A"}``, as delivery
        shows it; ``{}`` is public) or as the papers write it (``"[A, ⊥]"``)."""
        if isinstance(level, str):
            return self.lattice.clearance(self.lattice.written(level))
        if isinstance(level, Mapping) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in level.items()
        ):
            return self.mask_of(level)
        raise InvalidInput(
            code=codes.LEVEL_BAD_SHAPE,
            reason=f'{str(level)[:64]} is neither {{"banks": "A"}} nor "[A, ⊥]"',
        )


UNSTATED = object()  # a tuple without a ``_level`` field


@dataclass(frozen=True)
class Admission:
    """How each tuple of one batch gets its level, decided once per batch at admission. A
    tuple that states none takes ``default``: its stream's company, public, or on a
    multilevel stream the sender's organisation (``None``: it has none, and the tuple is
    refused). Only a multilevel stream (001's trusted stream) takes a stated level, which
    ``ceiling`` must dominate: the sender's clearance and its own organisation."""

    policy: LevelPolicy
    default: int | None
    ceiling: int | None

    def level(self, index: int, stated: object = UNSTATED) -> int:
        """The level label of tuple ``index`` (its ``_level`` field's value, if any)."""
        if stated is UNSTATED:
            if self.default is None:
                raise Denied(code=codes.LEVEL_NO_ORGANISATION, details={"tuple": index})
            return self.default
        if self.ceiling is None:
            raise InvalidInput(
                code=codes.LEVEL_NOT_MULTILEVEL, details={"tuple": index}, index=index
            )
        try:
            label = self.policy.stated(stated)
        except InvalidInput as err:
            raise InvalidInput(
                f"tuple {index}, field '_level': {err.message}",
                code=err.code,
                details={"tuple": index},
            ) from None
        if label & ~self.ceiling:
            raise Denied(
                code=codes.LEVEL_NOT_CLEARED,
                details={"tuple": index},
                index=index,
                level=json.dumps(self.policy.level_of(label), ensure_ascii=False),
            )
        return label


EMPTY = LevelPolicy.make(Lattice(()))
PUBLIC_ONLY = Admission(EMPTY, PUBLIC, None)  # every tuple public, none states a level
