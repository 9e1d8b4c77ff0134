"""Which roles may read a tuple, and which of its fields: the policy label of seed 003.

Roles are bits (``roles`` maps a role name to its bit, as the catalog will number them); a
label is plain integers, ready to become label columns:

* ``fields[i]``: the roles that may read field ``i``: those a positive sp covering the field
  names, minus those a negative sp covering it names (a denial wins, as in the authorization
  model 003 cites [6]). Nothing covers a field: nobody reads it (deny by default).
* ``mask``: the OR of the field masks, the roles that may read something of the tuple. A tuple
  reaches a subscriber iff ``mask`` meets the subscriber's active roles; its fields the
  subscriber's roles do not meet are then hidden, and at least one is left to see.
* ``grants[i]``: the roles that may read field ``i`` *with the grant option* (section 4.4,
  ``WITH GRANT OPTION``): a positive sp with ``grant`` covering the field names them, and they
  may read it. A diagram whose owner role holds it may relabel results computed from the field
  (``ON RESULT``: ``boxes/punctuations/results.py``). Empty: nobody holds it on any field.

An sp covers field ``a`` of tuple ``t`` in stream ``s`` iff ``s ∈ E_s``, ``tid(t) ∈ E_t`` and
``a ∈ E_a`` (Definition 4.1). The tuple identifier is the stream's ``tid_field`` (003's
footnote 6: a key such as ``patient_id``). When it cannot be known (no such field, or none
named), a tuple pattern other than ``*`` does not grant, and does deny.

>>> from boxes.punctuations import patterns as p
>>> sp = Sp(streams=p.const("s1"), roles=p.const("C"), ts=1, sn=1)
>>> decide(Policy(1, (sp,)), "s1", {"id": 7, "bpm": 70}, ("id", "bpm"), {"C": 0, "D": 1})
TupleLabel(mask=1, fields=(1, 1), grants=())
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from boxes.punctuations.model import Sp
from boxes.punctuations.patterns import ANY, CONST, SET, Pattern
from boxes.punctuations.shield import Admitted, Policy


@dataclass(frozen=True)
class TupleLabel:
    mask: int
    fields: tuple[int, ...]
    grants: tuple[int, ...] = ()


def role_mask(pattern: Pattern, roles: Mapping[str, int]) -> int:
    """The bits of the catalog's roles ``pattern`` matches (a role it names that the catalog
    does not know gets nothing). Role names are text, so a range matches none; the cost is the
    pattern's size, not the number of roles, but for ``*``."""
    if pattern.kind == ANY:
        return active_mask(roles, roles)
    return (
        active_mask((v for v in pattern.values if isinstance(v, str)), roles)
        if pattern.kind in (CONST, SET)
        else 0
    )


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
    effect: int  # GRANT_IMMUTABLE, GRANT or DENY
    fields: tuple[int, ...]
    delegable: bool = False  # a grant WITH GRANT OPTION


GRANT_IMMUTABLE, GRANT, DENY = 0, 1, 2
EVERYONE = -1  # all bits: no server policy restricts anything


class Decider:
    """A policy compiled for one stream's fields and the catalog's roles: a tuple then costs
    only its tuple patterns (none when every sp's is ``*``).

    ``server``: the server's own policy for the stream (section 4.2), combined with what the
    provider's mutable sps grant by intersection (``union`` False: a role reads a field so
    granted only if the server's policy grants it too) or by union (``union``: a role reads a
    field if the provider's sps or the server's policy grant it). A field an immutable sp
    grants, the server leaves alone either way; a provider's denial holds either way.
    """

    def __init__(
        self,
        policy: Policy | None,
        stream: str,
        fields: Sequence[str],
        roles: Mapping[str, int],
        tid_field: str | None = None,
        server: Policy | None = None,
        union: bool = False,
    ) -> None:
        self.width, self.tid_field, self.union = len(fields), tid_field, union
        rules = (_rule(sp, stream, fields, roles) for sp in (policy.sps if policy else ()))
        self.rules = tuple(r for r in rules if any(r.fields))
        self.server = Decider(server, stream, fields, roles, tid_field) if server else None
        fixed = all(r.tuples.kind == ANY for r in self.rules)
        self.constant: TupleLabel | None = None
        if fixed and (not self.server or self.server.constant):
            self.constant = self.at(None)

    def __call__(self, values: Mapping[str, Any]) -> TupleLabel:
        return self.at(values.get(self.tid_field) if self.tid_field is not None else None)

    def at(self, tid: Any) -> TupleLabel:
        """The label of a tuple whose identifier is ``tid`` (None: not known)."""
        if self.constant is not None:
            return self.constant
        if self.server is None:
            return _combine(self.rules, tid, (EVERYONE,) * self.width)
        return _combine(self.rules, tid, self.server.at(tid).fields, self.union)


class Deciders:
    """Compiled policies by content (the paper's "combine sps with similar policies"): what a
    policy decides depends on its sps' patterns, roles and flags, not on their timestamp or
    numbering (grants and denials combine by OR, in any order), so a provider sending its
    policy again with a new timestamp costs a lookup, not a compile. The newest ``size``."""

    def __init__(
        self,
        stream: str,
        fields: Sequence[str],
        roles: Mapping[str, int],
        tid_field: str | None = None,
        size: int = 64,
        server: Policy | None = None,
        union: bool = False,
    ) -> None:
        self.stream, self.fields, self.roles, self.tid_field = stream, fields, roles, tid_field
        self.size, self.server, self.union = size, server, union
        self._cache: dict[frozenset | None, Decider] = {}

    def __call__(self, policy: Policy | None) -> Decider:
        key = None if policy is None else frozenset(sp.content() for sp in policy.sps)
        found = self._cache.get(key)
        if found is None:
            found = Decider(
                policy,
                self.stream,
                self.fields,
                self.roles,
                self.tid_field,
                self.server,
                self.union,
            )
            if len(self._cache) >= self.size:
                del self._cache[next(iter(self._cache))]
            self._cache[key] = found
        return found

    def labels(
        self, admitted: Admitted, tids: Callable[[], Sequence[Any]] | None = None
    ) -> list[TupleLabel]:
        """The label of each tuple of a batch the shield admitted; ``tids`` reads their
        identifiers (None: not known; so too with no ``tid_field``), called only if some
        policy has a tuple pattern. A policy is looked up once per set of sps
        (``Admitted.kinds``), not once per tuple."""
        kind, policies = admitted.kinds()
        deciders = [*(self(policy) for policy in policies), self(None)]  # [-1]: denied
        if tids is None or self.tid_field is None or all(d.constant is not None for d in deciders):
            fixed = np.empty(len(deciders), object)
            fixed[:] = [d.at(None) for d in deciders]
            return fixed[kind].tolist()
        which = kind.tolist()
        return [deciders[k].at(tid) for k, tid in zip(which, tids(), strict=True)]


def decide(
    policy: Policy | None,
    stream: str,
    values: Mapping[str, Any],
    fields: Sequence[str],
    roles: Mapping[str, int],
    tid_field: str | None = None,
    server: Policy | None = None,
    union: bool = False,
) -> TupleLabel:
    """The label of one tuple under ``policy`` (None: nobody reads it), combined with the
    server's policy ``server`` if there is one (by intersection, or by ``union``)."""
    return Decider(policy, stream, fields, roles, tid_field, server, union)(values)


def _rule(sp: Sp, stream: str, fields: Sequence[str], roles: Mapping[str, int]) -> Rule:
    mask = role_mask(sp.roles, roles) if sp.streams.matches(stream) else 0
    effect = DENY if not sp.positive else GRANT_IMMUTABLE if sp.immutable else GRANT
    covered = tuple(mask if sp.attributes.matches(f) else 0 for f in fields)
    return Rule(sp.tuples, effect, covered, sp.positive and sp.grant)


def _combine(
    rules: Sequence[Rule], tid: Any, server: Sequence[int], union: bool = False
) -> TupleLabel:
    """Per field: (immutable grants | mutable grants & what the server allows) & ~denials, or
    by ``union`` (immutable grants | mutable grants | what the server allows, where no
    immutable sp grants the field) & ~denials; and of those roles, the ones a grant covering
    the field gave the grant option."""
    masks = [[0] * len(server) for _ in (GRANT_IMMUTABLE, GRANT, DENY)]
    delegable = [0] * len(server)
    known = tid is not None
    for rule in rules:
        if rule.tuples.kind == ANY or (known and rule.tuples.matches(tid)):
            target = masks[rule.effect]
        elif rule.effect == DENY and not known:
            target = masks[DENY]  # cannot tell whether the denial covers it: it does
        else:
            continue
        for i, m in enumerate(rule.fields):
            target[i] |= m
            if rule.delegable:
                delegable[i] |= m
    fixed, granted, denied = masks
    fields = tuple(
        ((f | g | (0 if f else a)) if union else (f | g & a)) & ~d
        for f, g, a, d in zip(fixed, granted, server, denied, strict=True)
    )
    mask = 0
    for m in fields:
        mask |= m
    grants = tuple(g & f for g, f in zip(delegable, fields, strict=True))
    return TupleLabel(mask, fields, grants if any(grants) else ())


def join(left: TupleLabel, right: TupleLabel, keys: Sequence[tuple[int, int]]) -> TupleLabel | None:
    """The label of a joined pair (the Security-Compliant Join of section 5.4), or None: the
    pair is not joined.

    Their policies must intersect (Figure 12, line 13), and on the join attributes too (line
    16): ``keys`` pairs a left field with the right field it is compared with. The result may
    be read by the roles both policies grant and that may read every join attribute on both
    sides (a role that could not would learn a hidden value from the match); each field keeps
    what its own side allowed, within those roles. Fields are the left's, then the right's.
    """
    roles = left.mask & right.mask
    for i, j in keys:
        roles &= left.fields[i] & right.fields[j]
    if not roles:
        return None
    grants = _grants(left) + _grants(right)
    fields = tuple(f & roles for f in left.fields + right.fields)
    kept = tuple(g & roles for g in grants)
    return TupleLabel(roles, fields, kept if any(kept) else ())


def _grants(label: TupleLabel) -> tuple[int, ...]:
    return label.grants or (0,) * len(label.fields)
