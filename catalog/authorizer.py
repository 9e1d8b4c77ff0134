"""The OxRBAC decision: a pure function of the subject, the action, the object and a snapshot.

Deny by default. Only the snapshot is trusted: the session's active roles, the user's current
roles and whether the user is enabled are all read from it, so a ``Subject`` resolved before a
revocation or a logout cannot outlive it. ``rule`` names what decided (``owner``, ``grant``,
``catalog`` or why not), which is what the audit log records. What each operation needs is
data, in ``catalog.policy``; :func:`decide_any` decides one group of its needs.

>>> in1 = cat.core.find(joe, "stream", "in1")       # ``cat`` and ``joe`` as in ``catalog.front``
>>> decide(None, Action.VIEW_OBJECT, in1, cat.core.snapshot)
Decision(allowed=False, reason='no open session of an enabled user', rule='no_session')
>>> decide(joe, Action.READ_TUPLE, in1, cat.core.snapshot)
Decision(allowed=True, reason='role ADMIN owns stream in1', rule='owner')
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from catalog.model import Action, CatalogObject, ObjectType, Subject
from catalog.snapshot import Snapshot

OWNER = "OWNER"  # a need no grant gives: the object's owner role must be active


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str
    rule: str


def active_roles(subject: Subject | None, snapshot: Snapshot) -> frozenset[str] | None:
    """The roles the session has active and the user may still play; None if it is not valid."""
    if subject is None:
        return None
    session = snapshot.sessions.get(subject.session_id)
    user = snapshot.users.get(subject.user_id)
    if session is None or user is None or session.user_id != user.id or not user.enabled:
        return None
    return session.roles & user.roles


def playing(subject: Subject | None, snapshot: Snapshot) -> frozenset[str]:
    """``active_roles``, none for an invalid session: what a session's roles count for now
    (clearances, sp grants), so a role taken from its user stops counting in open sessions."""
    return active_roles(subject, snapshot) or frozenset()


def owns(subject: Subject | None, obj: CatalogObject, snapshot: Snapshot) -> bool:
    """Whether the object's owner role is active in the subject's (valid) session."""
    return obj.owner_role in (active_roles(subject, snapshot) or ())


def decide(
    subject: Subject | None, action: Action, obj: CatalogObject | None, snapshot: Snapshot
) -> Decision:
    roles = active_roles(subject, snapshot)
    if roles is None:
        return Decision(False, "no open session of an enabled user", "no_session")
    current = snapshot.objects.get(obj.id) if obj is not None else None
    if obj is None or current is None or (current.type, current.name) != (obj.type, obj.name):
        return Decision(False, "no such object", "no_object")
    obj = current
    what = f"{obj.type.value} {obj.public}"
    if action not in obj.applicable:
        return Decision(False, f"{action.value} does not apply to {what}", "not_applicable")
    system = snapshot.system
    for role in sorted(roles):
        if obj.owner_role == role:
            return Decision(True, f"role {role} owns {what}", "owner")
        if (role, action, obj.id) in snapshot.held:
            return Decision(True, f"{action.value} on {what} is granted to role {role}", "grant")
        if (
            action is Action.VIEW_OBJECT
            and system is not None
            and snapshot.role_holds(role, Action.VIEW_CATALOG, system)
        ):
            return Decision(True, f"role {role} may view the whole catalog", "catalog")
    return Decision(False, f"no active role holds {action.value} on {what}", "default_deny")


def sees(subject: Subject | None, obj: CatalogObject, snapshot: Snapshot) -> Decision:
    """VIEW_OBJECT, except that every session sees the one system object."""
    if obj.type is ObjectType.SYSTEM and active_roles(subject, snapshot) is not None:
        return Decision(True, "every session sees the system", "system")
    return decide(subject, Action.VIEW_OBJECT, obj, snapshot)


def decide_need(
    subject: Subject | None, action: Action | str, obj: CatalogObject, snapshot: Snapshot
) -> Decision:
    """One need of an operation (see ``catalog.policy``): an action, or ``OWNER``."""
    if action == OWNER:
        what = f"{obj.type.value} {obj.public}"
        if owns(subject, obj, snapshot):
            return Decision(True, f"role {obj.owner_role} owns {what}", "owner")
        if active_roles(subject, snapshot) is None:
            return Decision(False, "no open session of an enabled user", "no_session")
        return Decision(
            False, f"only its owner role {obj.owner_role} may do this to {what}", "not_owner"
        )
    assert isinstance(action, Action), action  # OWNER is the one need that is not an action
    if action is Action.VIEW_OBJECT:
        return sees(subject, obj, snapshot)
    return decide(subject, action, obj, snapshot)


def decide_any(
    subject: Subject | None, needs: Iterable[tuple[Action | str, CatalogObject]], snapshot: Snapshot
) -> Decision:
    """The first of ``needs`` the subject meets, or else the refusal of the first one."""
    refusal = None
    for action, obj in needs:
        decision = decide_need(subject, action, obj, snapshot)
        if decision.allowed:
            return decision
        refusal = refusal or decision
    return refusal or Decision(False, "nothing allows it", "default_deny")
