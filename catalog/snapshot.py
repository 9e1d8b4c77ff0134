"""An immutable, indexed picture of the catalog: what every decision reads.

A snapshot is built whole from one transaction's rows and replaced whole after each change, so
a decision sees either all of a change or none of it (the pycasbin pattern).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Mapping

from catalog.model import Action, CatalogObject, Grant, ObjectType, Session, User
from catalog.repository import ObjectRows, SubjectRows


@dataclass(frozen=True)
class Snapshot:
    users: Mapping[int, User]
    users_by_name: Mapping[str, User]
    roles: frozenset[str]
    objects: Mapping[int, CatalogObject]
    by_name: Mapping[tuple[ObjectType, str], CatalogObject]
    grants: Mapping[int, tuple[Grant, ...]]
    held: frozenset[tuple[str, Action, int]]
    sessions: Mapping[int, Session]
    sessions_by_token: Mapping[str, Session]
    read_masks: Mapping[str, int]

    @property
    def system(self) -> CatalogObject | None:
        return self.by_name.get((ObjectType.SYSTEM, "system"))

    def find(self, type_: ObjectType, name: str) -> CatalogObject | None:
        return self.by_name.get((type_, name))

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


def _read_masks(objects: Mapping[int, CatalogObject], held: frozenset) -> dict[str, int]:
    """Per role, the source bits of the input streams it may READ_TUPLE (owned or granted)."""
    masks: dict[str, int] = {}
    for obj in objects.values():
        if obj.source_index is not None:
            masks[obj.owner_role] = masks.get(obj.owner_role, 0) | 1 << obj.source_index
    for role, action, object_id in held:
        source = objects[object_id].source_index
        if action is Action.READ_TUPLE and source is not None:
            masks[role] = masks.get(role, 0) | 1 << source
    return masks


def _subject_fields(rows: SubjectRows) -> dict:
    return dict(users=MappingProxyType({u.id: u for u in rows.users}),
                users_by_name=MappingProxyType({u.name: u for u in rows.users}),
                roles=frozenset(rows.roles),
                sessions=MappingProxyType({s.id: s for _, s in rows.sessions}),
                sessions_by_token=MappingProxyType(dict(rows.sessions)))


def _object_fields(rows: ObjectRows) -> dict:
    objects = {o.id: o for o in rows.objects}
    grants: dict[int, list[Grant]] = {}
    for g in rows.grants:
        grants.setdefault(g.object_id, []).append(g)
    held = frozenset((g.role, g.action, g.object_id) for g in rows.grants)
    return dict(objects=MappingProxyType(objects),
                by_name=MappingProxyType({(o.type, o.name): o for o in rows.objects}),
                grants=MappingProxyType({k: tuple(v) for k, v in grants.items()}),
                held=held,
                read_masks=MappingProxyType(_read_masks(objects, held)))


def build(subjects: SubjectRows, objects: ObjectRows) -> Snapshot:
    return Snapshot(**_subject_fields(subjects), **_object_fields(objects))


def with_subjects(previous: Snapshot, subjects: SubjectRows) -> Snapshot:
    """A new snapshot sharing ``previous``'s objects: logins need not re-read the whole catalog."""
    return replace(previous, **_subject_fields(subjects))
