"""An immutable, indexed picture of the catalog: what every decision reads.

A snapshot is never changed: each catalog change makes a new one, inside the change's transaction,
and swaps it in whole, so a decision sees either all of a change or none of it (the pycasbin
pattern). The new one is built from every row (``build``), or from the previous one and the rows
of just the objects the change touched (``with_objects``), which must come out the same.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, cast

from boxes.errors import InvalidInput
from boxes.levels import Lattice
from boxes.punctuations.model import UNION, ServerPolicy, server_sp_from_json
from boxes.rewrite.policy import Policy, policy_from
from catalog.clearance import EMPTY, LevelPolicy
from catalog.model import Action, CatalogObject, Grant, ObjectType, Session, User
from catalog.repository import LevelRows, ObjectRows, PolicyRows, PunctuationRows, SubjectRows

log = logging.getLogger(__name__)
NO_ATTRIBUTES: Mapping[int, Mapping[str, Any]] = MappingProxyType({})
NO_BITS: Mapping[str, int] = MappingProxyType({})
NOT_GOVERNED: Mapping[int, str | None] = MappingProxyType({})
NO_SERVER_POLICIES: Mapping[int, ServerPolicy] = MappingProxyType({})


OWNER = "owner"  # a read right held by owning the stream (READ_TUPLE, never READ_AGGREGATE)
READS = (Action.READ_TUPLE, Action.READ_AGGREGATE)
ReadRights = Mapping[str, frozenset[tuple[Action | str, int]]]


@dataclass(frozen=True)
class Snapshot:
    users: Mapping[int, User]
    users_by_name: Mapping[str, User]
    roles: frozenset[str]
    objects: Mapping[int, CatalogObject]
    by_name: Mapping[tuple[ObjectType, str], CatalogObject]  # by key (``CatalogObject.name``)
    # by public name: the objects callers may mean by it (``catalog.names``)
    by_public: Mapping[tuple[ObjectType, str], tuple[CatalogObject, ...]]
    grants: Mapping[int, tuple[Grant, ...]]
    held: frozenset[tuple[str, Action, int]]
    sessions: Mapping[int, Session]
    sessions_by_token: Mapping[str, Session]
    read_masks: Mapping[str, int]
    aggregate_masks: Mapping[str, int]  # per role, the source bits it may READ_AGGREGATE
    read_rights: ReadRights  # per role, the reasons behind its masks (``_read_rights``)
    levels: LevelPolicy = EMPTY
    policies: tuple[Policy, ...] = ()  # ASSIST access-control policies, by name
    # per user id, the user's attributes (the ``self`` of policy predicates)
    attributes: Mapping[int, Mapping[str, Any]] = field(default_factory=lambda: NO_ATTRIBUTES)
    # security punctuations: each role's policy-label bit, and per governed input stream id
    # its tuple identifier field (None: none)
    role_bits: Mapping[str, int] = field(default_factory=lambda: NO_BITS)
    governed: Mapping[int, str | None] = field(default_factory=lambda: NOT_GOVERNED)
    # per governed stream id with one, the server's own sps and how they combine (003 4.2)
    server_policies: Mapping[int, ServerPolicy] = field(default_factory=lambda: NO_SERVER_POLICIES)

    @property
    def system(self) -> CatalogObject | None:
        return self.by_name.get((ObjectType.SYSTEM, "system"))

    def find(self, type_: ObjectType, name: str) -> CatalogObject | None:
        """The object whose key is ``name``; a caller's name is resolved by ``catalog.names``."""
        return self.by_name.get((type_, name))

    def named(self, type_: ObjectType, name: str) -> tuple[CatalogObject, ...]:
        """Every object whose public name is ``name``, whoever may see it."""
        return self.by_public.get((type_, name), ())

    def stored(self, type_: ObjectType, name: str) -> CatalogObject:
        """An object a change just stored: its absence is a bug (KeyError), not a user's error."""
        return self.by_name[(type_, name)]

    def role_holds(self, role: str, action: Action, obj: CatalogObject) -> bool:
        """Ownership or an explicit grant; no session or user is involved."""
        return obj.owner_role == role or (role, action, obj.id) in self.held

    def administrators(self) -> list[str]:
        """Enabled users who can play a role holding CHANGE_SYSTEM on the system."""
        system = self.system
        if system is None:
            return []
        admin_roles = {r for r in self.roles if self.role_holds(r, Action.CHANGE_SYSTEM, system)}
        return sorted(u.name for u in self.users.values() if u.enabled and u.roles & admin_roles)


def _read_rights(objects: Mapping[int, CatalogObject], held: frozenset) -> dict[str, frozenset]:
    """Per role, why it may read which input streams: ``(OWNER | READ_TUPLE | READ_AGGREGATE,
    object id)``."""
    rights: dict[str, set] = {}
    for obj in objects.values():
        if obj.source_index is not None:
            rights.setdefault(obj.owner_role, set()).add((OWNER, obj.id))
    for role, action, object_id in held:
        if action in READS and objects[object_id].source_index is not None:
            rights.setdefault(role, set()).add((action, object_id))
    return {role: frozenset(r) for role, r in rights.items()}


def _role_masks(rights: frozenset, objects: Mapping[int, CatalogObject]) -> tuple[int, int]:
    """One role's source bits to READ_TUPLE (owned or granted) and to READ_AGGREGATE (granted
    only: an owner reads its tuples anyway)."""
    tuples = aggregates = 0
    for reason, object_id in rights:
        bit = 1 << cast(int, objects[object_id].source_index)  # rights are on input streams
        if reason is Action.READ_AGGREGATE:
            aggregates |= bit
        else:
            tuples |= bit
    return tuples, aggregates


def _masks(
    objects: Mapping[int, CatalogObject],
    rights: ReadRights,
    roles: Iterable[str] | None = None,
    previous: Snapshot | None = None,
) -> dict:
    """The read masks of ``roles`` (all when None) recomputed, the others kept from
    ``previous``: a change costs the rights of the roles it touches, not of every role."""
    reads = dict(previous.read_masks) if previous else {}
    aggregates = dict(previous.aggregate_masks) if previous else {}
    for role in rights if roles is None else roles:
        tuples, aggregate = _role_masks(rights.get(role, frozenset()), objects)
        for masks, mask in ((reads, tuples), (aggregates, aggregate)):
            if mask:
                masks[role] = mask
            else:
                masks.pop(role, None)
    return dict(
        read_rights=MappingProxyType(dict(rights)),
        read_masks=MappingProxyType(reads),
        aggregate_masks=MappingProxyType(aggregates),
    )


def _subject_fields(rows: SubjectRows) -> dict:
    return dict(
        users=MappingProxyType({u.id: u for u in rows.users}),
        users_by_name=MappingProxyType({u.name: u for u in rows.users}),
        roles=frozenset(rows.roles),
        sessions=MappingProxyType({s.id: s for _, s in rows.sessions}),
        sessions_by_token=MappingProxyType(dict(rows.sessions)),
    )


def _object_fields(rows: ObjectRows) -> dict:
    objects = {o.id: o for o in rows.objects}
    grants: dict[int, list[Grant]] = {}
    for g in rows.grants:
        grants.setdefault(g.object_id, []).append(g)
    held = frozenset((g.role, g.action, g.object_id) for g in rows.grants)
    return dict(
        objects=MappingProxyType(objects),
        by_name=MappingProxyType({(o.type, o.name): o for o in rows.objects}),
        by_public=MappingProxyType(_by_public(rows.objects)),
        grants=MappingProxyType({k: tuple(v) for k, v in grants.items()}),
        held=held,
        **_masks(objects, _read_rights(objects, held)),
    )


def _by_public(objects: Iterable[CatalogObject]) -> dict:
    found: dict[tuple[ObjectType, str], tuple[CatalogObject, ...]] = {}
    for o in objects:
        found[o.type, o.public] = found.get((o.type, o.public), ()) + (o,)
    return found


def level_policy(rows: LevelRows) -> LevelPolicy:
    """The Chinese-Wall policy of the level tables (classes without a company are left out:
    every level is ⊥ in them)."""
    classes = {name: [c for c, _ in companies] for name, companies in rows.classes if companies}
    bits = {c: bit for _, companies in rows.classes for c, bit in companies}
    clearances: dict[str, dict[str, str]] = {}
    for role, coi, entry in rows.clearances:
        if coi in classes:
            clearances.setdefault(role, {})[coi] = entry
    return LevelPolicy.make(
        Lattice.of(classes, bits), dict(rows.streams), dict(rows.organisations), clearances
    )


def access_fields(rows: PolicyRows) -> dict:
    """The stored policies, parsed again (one the model no longer accepts is left out and
    logged: it grants nothing), and the users' attributes."""
    policies = []
    for name, item in rows.policies:
        try:
            policies.append(policy_from(json.loads(item), 0))
        except (InvalidInput, ValueError) as err:
            log.error("stored policy %r is not valid any more and grants nothing: %s", name, err)
    attributes: dict[int, dict[str, Any]] = {}
    for user_id, name, value in rows.attributes:
        attributes.setdefault(user_id, {})[name] = json.loads(value)
    return dict(
        policies=tuple(policies),
        attributes=MappingProxyType({k: MappingProxyType(v) for k, v in attributes.items()}),
    )


def punctuation_fields(rows: PunctuationRows) -> dict:
    return dict(
        role_bits=MappingProxyType(dict(rows.role_bits)),
        governed=MappingProxyType({stream: tid for stream, tid, _ in rows.governed}),
        server_policies=MappingProxyType(
            {stream: _server_policy(stream, text) for stream, _, text in rows.governed if text}
        ),
    )


def _server_policy(stream_id: int, text: str) -> ServerPolicy:
    """A stored server policy: its sps' list (combined by intersection) or ``{"combine":
    "union", "sps": [...]}``; one no longer valid refines to nothing (fails closed: only the
    providers' immutable grants stay), and says so."""
    try:
        stored = json.loads(text)
        union = isinstance(stored, dict) and stored.get("combine") == UNION
        items = stored["sps"] if union else stored
        return ServerPolicy(
            tuple(server_sp_from_json(item, n) for n, item in enumerate(items, 1)), union
        )
    except (InvalidInput, ValueError, TypeError, KeyError) as err:
        log.error("stream %d's server policy is not valid and grants nothing: %s", stream_id, err)
        return ServerPolicy(())


def build(
    subjects: SubjectRows,
    objects: ObjectRows,
    levels: LevelRows | None = None,
    access: PolicyRows | None = None,
    punctuations: PunctuationRows | None = None,
) -> Snapshot:
    policy = EMPTY if levels is None else level_policy(levels)
    extra = {} if access is None else access_fields(access)
    if punctuations is not None:
        extra.update(punctuation_fields(punctuations))
    return Snapshot(**_subject_fields(subjects), **_object_fields(objects), levels=policy, **extra)


def with_punctuations(previous: Snapshot, rows: PunctuationRows) -> Snapshot:
    return replace(previous, **punctuation_fields(rows))


def with_access(previous: Snapshot, access: PolicyRows) -> Snapshot:
    return replace(previous, **access_fields(access))


def with_levels(previous: Snapshot, levels: LevelRows) -> Snapshot:
    return replace(previous, levels=level_policy(levels))


def with_subjects(previous: Snapshot, subjects: SubjectRows) -> Snapshot:
    """A new snapshot sharing ``previous``'s objects: logins need not re-read the whole catalog."""
    return replace(previous, **_subject_fields(subjects))


def _readers(objects, grants) -> set[str]:
    """The roles whose read masks these objects or grants can change."""
    return {o.owner_role for o in objects if o.source_index is not None} | {
        g.role for g in grants if g.action in READS
    }


def with_objects(previous: Snapshot, touched: frozenset[int], rows: ObjectRows) -> Snapshot:
    """``previous`` with the objects ``touched`` replaced by ``rows`` (their current rows, with
    their grants); a touched id without a row was deleted. Costs the size of the change plus a
    copy of the indexes, instead of re-reading and re-indexing the whole catalog."""
    gone = [previous.objects[i] for i in touched if i in previous.objects]
    gone_grants = [g for i in touched for g in previous.grants.get(i, ())]
    objects = dict(previous.objects)
    by_name = dict(previous.by_name)
    by_public = dict(previous.by_public)
    grants = dict(previous.grants)
    for obj in gone:
        del objects[obj.id], by_name[obj.type, obj.name]
        others = tuple(o for o in by_public.pop((obj.type, obj.public)) if o.id != obj.id)
        if others:
            by_public[obj.type, obj.public] = others
    for i in touched:
        grants.pop(i, None)
    for obj in rows.objects:
        objects[obj.id] = by_name[obj.type, obj.name] = obj
        same = by_public.get((obj.type, obj.public), ()) + (obj,)
        by_public[obj.type, obj.public] = tuple(sorted(same, key=lambda o: o.id))
    for g in rows.grants:
        grants[g.object_id] = grants.get(g.object_id, ()) + (g,)
    held = previous.held
    if gone_grants or rows.grants:
        held = (held - {(g.role, g.action, g.object_id) for g in gone_grants}) | {
            (g.role, g.action, g.object_id) for g in rows.grants
        }
    masks: dict = {}
    affected = _readers(gone, gone_grants) | _readers(rows.objects, rows.grants)
    if affected:
        fresh = _read_rights(
            {o.id: o for o in rows.objects},
            frozenset((g.role, g.action, g.object_id) for g in rows.grants),
        )
        rights = dict(previous.read_rights)
        for role in affected:
            kept = {r for r in rights.pop(role, ()) if r[1] not in touched}
            if kept or role in fresh:
                rights[role] = frozenset(kept) | fresh.get(role, frozenset())
        masks = _masks(objects, rights, affected, previous)
    return replace(
        previous,
        objects=MappingProxyType(objects),
        by_name=MappingProxyType(by_name),
        by_public=MappingProxyType(by_public),
        grants=MappingProxyType(grants),
        held=held,
        **masks,
    )
