"""Which roles may read a tuple, and which of its fields: the policy label of seed 003.

Roles are bits (``roles`` maps a role name to its bit, as the catalog will number them); a
label is plain integers, ready to become label columns:

* ``fields[i]``: the roles that may read field ``i``: those a positive sp covering the field
  names, minus those a negative sp covering it names (a denial wins, as in the authorization
  model 003 cites [6]). Nothing covers a field: nobody reads it (deny by default).
* ``mask``: the OR of the field masks, the roles that may read something of the tuple. A tuple
  reaches a subscriber iff ``mask`` meets the subscriber's active roles; its fields the
  subscriber's roles do not meet are then hidden, and at least one is left to see.

An sp covers field ``a`` of tuple ``t`` in stream ``s`` iff ``s ∈ E_s``, ``tid(t) ∈ E_t`` and
``a ∈ E_a`` (Definition 4.1). The tuple identifier is the stream's ``tid_field`` (003's
footnote 6: a key such as ``patient_id``). When it cannot be known (no such field, or none
named), a tuple pattern other than ``*`` does not grant, and does deny.

>>> from boxes.punctuations import patterns as p
>>> sp = Sp(streams=p.const("s1"), roles=p.const("C"), ts=1, sn=1)
>>> decide(Policy(1, (sp,)), "s1", {"id": 7, "bpm": 70}, ("id", "bpm"), {"C": 0, "D": 1})
TupleLabel(mask=1, fields=(1, 1))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from boxes.punctuations.model import Sp
from boxes.punctuations.patterns import ANY, Pattern
from boxes.punctuations.shield import Policy


@dataclass(frozen=True)
class TupleLabel:
    mask: int
    fields: tuple[int, ...]


def role_mask(pattern: Pattern, roles: Mapping[str, int]) -> int:
    """The bits of the catalog's roles ``pattern`` matches (a role it names that the catalog
    does not know gets nothing)."""
    mask = 0
    for name, bit in roles.items():
        if pattern.matches(name):
            mask |= 1 << bit
    return mask


def active_mask(active: Iterable[str], roles: Mapping[str, int]) -> int:
    """A subscriber's active roles as bits."""
    mask = 0
    for name in active:
        if name in roles:
            mask |= 1 << roles[name]
    return mask


@dataclass(frozen=True)
class Rule:
    """One sp, evaluated once per policy: its tuple pattern and what it does to each field."""

    tuples: Pattern
    positive: bool
    fields: tuple[int, ...]


class Decider:
    """A policy compiled for one stream's fields and the catalog's roles: a tuple then costs
    only its tuple patterns (none when every sp's is ``*``)."""

    def __init__(
        self,
        policy: Policy | None,
        stream: str,
        fields: Sequence[str],
        roles: Mapping[str, int],
        tid_field: str | None = None,
    ) -> None:
        self.width, self.tid_field = len(fields), tid_field
        self.rules = tuple(
            _rule(sp, stream, fields, roles) for sp in (policy.sps if policy else ())
        )
        self.rules = tuple(r for r in self.rules if any(r.fields))
        self.constant = (
            _combine(self.rules, None, self.width)
            if all(r.tuples.kind == ANY for r in self.rules)
            else None
        )

    def __call__(self, values: Mapping[str, Any]) -> TupleLabel:
        if self.constant is not None:
            return self.constant
        tid = values.get(self.tid_field) if self.tid_field is not None else None
        return _combine(self.rules, tid, self.width)


def decide(
    policy: Policy | None,
    stream: str,
    values: Mapping[str, Any],
    fields: Sequence[str],
    roles: Mapping[str, int],
    tid_field: str | None = None,
) -> TupleLabel:
    """The label of one tuple under ``policy`` (None: nobody reads it)."""
    return Decider(policy, stream, fields, roles, tid_field)(values)


def _rule(sp: Sp, stream: str, fields: Sequence[str], roles: Mapping[str, int]) -> Rule:
    mask = role_mask(sp.roles, roles) if sp.streams.matches(stream) else 0
    return Rule(
        sp.tuples, sp.positive, tuple(mask if sp.attributes.matches(f) else 0 for f in fields)
    )


def _combine(rules: Sequence[Rule], tid: Any, width: int) -> TupleLabel:
    granted, denied = [0] * width, [0] * width
    for rule in rules:
        known = tid is not None
        if rule.tuples.kind == ANY or (known and rule.tuples.matches(tid)):
            target = granted if rule.positive else denied
        elif not rule.positive and not known:
            target = denied  # cannot tell whether the denial covers it: it does
        else:
            continue
        for i, m in enumerate(rule.fields):
            target[i] |= m
    fields = tuple(g & ~d for g, d in zip(granted, denied, strict=True))
    mask = 0
    for m in fields:
        mask |= m
    return TupleLabel(mask, fields)
