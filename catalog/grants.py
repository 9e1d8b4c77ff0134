"""Granting and revoking permissions, and reading the permission table.

Who may do each is the ``permissions.*`` rule of ``catalog.policy``, checked again here under
the store's lock; that a granter holds what it grants is checked here only.

Owners may grant anything on what they own; holders of CHANGE_PERM on an object may grant and
revoke on it; nobody grants an action they do not hold themselves. Administrators (CHANGE_SYSTEM)
may revoke any grant, to stop a leak, but gain no data access that way. Revocation does not
cascade: what a role granted on stays until revoked itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from boxes import codes
from boxes.errors import Conflict, Denied, InvalidInput
from catalog import repository
from catalog.accounts import role_named
from catalog.authorizer import decide, owns
from catalog.core import Core
from catalog.model import Action, CatalogObject, Grant, ObjectType, Subject, parse_action
from catalog.policy import OPERATIONS
from catalog.snapshot import Snapshot


@dataclass(frozen=True)
class Row:
    """One line of the permission table: a role's actions on an object, and through what."""

    type: ObjectType
    name: str
    role: str
    actions: tuple[Action, ...]
    via: str

    def to_dict(self) -> dict:
        return {
            "type": self.type.value,
            "name": self.name,
            "role": self.role,
            "actions": [a.value for a in self.actions],
            "via": self.via,
        }


def rows_for(obj: CatalogObject, snapshot: Snapshot) -> list[Row]:
    rows = [Row(obj.type, obj.public, obj.owner_role, tuple(sorted(obj.applicable)), "owner")]
    by_role: dict[str, list[Action]] = {}
    for g in snapshot.grants.get(obj.id, ()):
        by_role.setdefault(g.role, []).append(g.action)
    rows += [
        Row(obj.type, obj.public, r, tuple(sorted(a)), "grant") for r, a in sorted(by_role.items())
    ]
    return rows


class Grants:
    def __init__(self, core: Core) -> None:
        self.core = core

    def _target(
        self, subject: Subject, role: str, action: Action | str, type_: ObjectType, name: str
    ) -> tuple[Snapshot, CatalogObject, Action, str]:
        snapshot = self.core.snapshot
        obj = self.core.find(subject, type_, name, snapshot)
        parsed = parse_action(action)
        if parsed not in obj.applicable:
            raise InvalidInput(
                f"{parsed.value} does not apply to {obj.type.value} {obj.public}",
                code=codes.ACTION_NOT_APPLICABLE,
            )
        return snapshot, obj, parsed, role_named(snapshot, role)

    def grant(
        self, subject: Subject, role: str, action: Action | str, type_: ObjectType, name: str
    ) -> bool:
        """Give ``role`` the ``action`` on an object; False if it held that grant already."""
        core = self.core
        with core.store.lock:
            snapshot, obj, wanted, role = self._target(subject, role, action, type_, name)
            held = decide(subject, wanted, obj, snapshot)
            if not held.allowed:
                core.log(
                    subject,
                    "grant",
                    f"{obj.type.value}:{obj.name}",
                    False,
                    held.reason,
                    role=role,
                    action=wanted.value,
                )
                raise Denied(
                    f"you cannot grant {wanted.value} on {obj.type.value} {obj.public!r}: "
                    "you do not hold it",
                    code=codes.NOT_HELD,
                )
            core.authorize(
                subject,
                OPERATIONS["permissions.grant"],
                {"type_": obj.type, "name": obj.name},
                "grant",
            )
            with core.change() as conn:
                added = repository.insert_grant(
                    conn, Grant(role, wanted, obj.id, subject.user_name), core.clock()
                )
                if added:
                    core.log(
                        subject,
                        "grant",
                        f"{obj.type.value}:{obj.name}",
                        True,
                        "owner" if owns(subject, obj, snapshot) else "CHANGE_PERM",
                        conn,
                        role=role,
                        action=wanted.value,
                    )
        return added

    def revoke(
        self, subject: Subject, role: str, action: Action | str, type_: ObjectType, name: str
    ) -> bool:
        """Take a grant away; False if there was none. Ownership cannot be revoked."""
        core = self.core
        with core.store.lock:
            snapshot, obj, wanted, role = self._target(subject, role, action, type_, name)
            core.authorize(
                subject,
                OPERATIONS["permissions.revoke"],
                {"type_": obj.type, "name": obj.name},
                "revoke",
            )
            if role == obj.owner_role:
                raise Conflict(
                    f"role {role} owns {obj.type.value} {obj.name}; ownership is not "
                    "a grant and cannot be revoked",
                    code=codes.OWNER_NOT_REVOCABLE,
                )
            with core.change() as conn:
                removed = repository.delete_grant(conn, role, wanted, obj.id)
                if removed:
                    core.log(
                        subject,
                        "revoke",
                        f"{obj.type.value}:{obj.name}",
                        True,
                        "owner, CHANGE_PERM or administrator",
                        conn,
                        role=role,
                        action=wanted.value,
                    )
        return removed

    def of(self, subject: Subject, type_: ObjectType, name: str) -> list[Row]:
        """Who holds what on one object: for its owner, CHANGE_PERM holders and administrators."""
        core = self.core
        snapshot = core.snapshot
        obj = core.find(subject, type_, name, snapshot)
        core.authorize(
            subject, OPERATIONS["permissions.of"], {"type_": obj.type, "name": name}, "grants_list"
        )
        return rows_for(obj, snapshot)

    def table(self, subject: Subject) -> list[Row]:
        """The whole permission table, as the paper's figures show it; administrators only."""
        snapshot = self.core.require_admin(subject, "grants_list")
        objects = sorted(snapshot.objects.values(), key=lambda o: o.id)
        return [row for obj in objects for row in rows_for(obj, snapshot)]
