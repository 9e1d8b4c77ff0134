"""User and role administration, for holders of CHANGE_SYSTEM on the system object.

Disabling or deleting a user ends every session of that user in the same transaction; taking a
role from a user removes it from the user's open sessions too. No change may leave the platform
without an enabled administrator.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from boxes import codes
from boxes.errors import Conflict, Denied, NotFound
from catalog import passwords, repository
from catalog.core import Core
from catalog.model import USER_NAME, Subject, User, check_name
from catalog.snapshot import Snapshot


def user_named(snapshot: Snapshot, name: str) -> User:
    user = snapshot.users_by_name.get(name) if isinstance(name, str) else None
    if user is None:
        raise NotFound(code=codes.UNKNOWN_USER, name=str(name)[:64])
    return user


def role_named(snapshot: Snapshot, name: str) -> str:
    if not isinstance(name, str) or name not in snapshot.roles:
        raise NotFound(code=codes.UNKNOWN_ROLE, name=str(name)[:64])
    return name


class Accounts:
    def __init__(self, core: Core) -> None:
        self.core = core

    def add_user(
        self, subject: Subject, name: str, password: str, roles: Iterable[str] = ()
    ) -> User:
        core = self.core
        check_name(name, "user", USER_NAME)
        roles = tuple(roles)
        hashed = self._hash(subject, password, "user_add")
        with core.store.lock:
            snapshot = core.require_admin(subject, "user_add")
            for role in roles:
                role_named(snapshot, role)
            if name in snapshot.users_by_name:
                raise Conflict(code=codes.DUPLICATE_NAME, what="user", name=name)
            with core.change() as conn:
                user_id = repository.insert_user(conn, name, hashed, True, core.clock())
                for role in roles:
                    repository.assign_role(conn, user_id, role)
                core.log(
                    subject,
                    "user_add",
                    f"user:{name}",
                    True,
                    "administrator",
                    conn,
                    roles=sorted(roles),
                )
        return core.snapshot.users[user_id]

    def set_password(self, subject: Subject, name: str, password: str) -> None:
        """An administrator sets a new password; the user's sessions end.

        Not its own: that needs the current password (``change_own_password``), so a stolen
        administrator session cannot lock the administrator out."""
        core = self.core
        if name == subject.user_name:
            core.log(subject, "user_password", f"user:{name}", False, "own password")
            raise Denied(code=codes.OWN_PASSWORD)
        hashed = self._hash(subject, password, "user_password")
        with core.store.lock:
            user = user_named(core.require_admin(subject, "user_password"), name)
            with core.change() as conn:
                repository.set_password_hash(conn, user.id, hashed)
                repository.end_sessions_of(conn, user.id)
                core.log(subject, "user_password", f"user:{name}", True, "administrator", conn)

    def _hash(self, subject: Subject, password: str, event: str) -> str:
        """Hash outside the store lock (bcrypt takes a while), but only for an administrator."""
        self.core.require_admin(subject, event)
        return passwords.hash_password(password, self.core.settings.bcrypt_rounds)

    def change_own_password(self, subject: Subject, old: str, new: str) -> None:
        """A user changes its own password, proving the old one; its other sessions end.

        A wrong old password is WRONG_PASSWORD (403), not UNAUTHENTICATED: the session is
        still good, only the proof failed."""
        core = self.core
        snapshot = core.snapshot
        core.valid(subject, snapshot)
        with core.store.reader() as conn:
            row = repository.password_hash(conn, subject.user_name)
        if row is None or not passwords.verify(old, row[1]):
            core.log(
                subject, "password_change", f"user:{subject.user_name}", False, "wrong old password"
            )
            raise Denied(code=codes.WRONG_PASSWORD)
        hashed = passwords.hash_password(new, core.settings.bcrypt_rounds)
        with core.change() as conn:
            repository.set_password_hash(conn, row[0], hashed)
            repository.end_sessions_of(conn, row[0], keep=subject.session_id)
            core.log(
                subject,
                "password_change",
                f"user:{subject.user_name}",
                True,
                "old password verified",
                conn,
            )

    def set_enabled(self, subject: Subject, name: str, enabled: bool) -> None:
        core = self.core
        event = "user_enable" if enabled else "user_disable"
        with core.store.lock:
            user = user_named(core.require_admin(subject, event), name)
            with core.change() as conn:
                repository.set_enabled(conn, user.id, enabled)
                ended = 0 if enabled else repository.end_sessions_of(conn, user.id)
                core.log(
                    subject,
                    event,
                    f"user:{name}",
                    True,
                    "administrator",
                    conn,
                    sessions_ended=ended,
                )

    def delete_user(self, subject: Subject, name: str) -> None:
        """The user and its sessions go; objects it created stay with their owner role."""
        core = self.core
        with core.store.lock:
            user = user_named(core.require_admin(subject, "user_delete"), name)
            with core.change() as conn:
                repository.delete_user(conn, user.id)
                core.log(subject, "user_delete", f"user:{name}", True, "administrator", conn)

    def add_role(self, subject: Subject, name: str) -> None:
        core = self.core
        check_name(name, "role")
        with core.store.lock:
            if name in core.require_admin(subject, "role_add").roles:
                raise Conflict(code=codes.DUPLICATE_NAME, what="role", name=name)
            with core.change() as conn:
                repository.insert_role(conn, name, core.clock())
                core.log(subject, "role_add", f"role:{name}", True, "administrator", conn)

    def delete_role(self, subject: Subject, name: str) -> None:
        """Refused while the role owns objects: ownership is never silently handed over."""
        core = self.core
        with core.store.lock:
            snapshot = core.require_admin(subject, "role_delete")
            role_named(snapshot, name)
            owned = sorted(o.name for o in snapshot.objects.values() if o.owner_role == name)
            if owned:
                raise Conflict(
                    code=codes.ROLE_OWNS_OBJECTS,
                    role=name,
                    count=len(owned),
                    objects=", ".join(owned[:5]),
                )
            with core.change() as conn:
                repository.delete_role(conn, name)
                core.log(subject, "role_delete", f"role:{name}", True, "administrator", conn)

    def assign_role(self, subject: Subject, user_name: str, role: str) -> None:
        self._membership(subject, user_name, role, "role_assign", repository.assign_role)

    def unassign_role(self, subject: Subject, user_name: str, role: str) -> None:
        self._membership(subject, user_name, role, "role_unassign", repository.unassign_role)

    def _membership(
        self, subject: Subject, user_name: str, role: str, event: str, write: Callable
    ) -> None:
        core = self.core
        with core.store.lock:
            snapshot = core.require_admin(subject, event)
            user = user_named(snapshot, user_name)
            role_named(snapshot, role)
            with core.change() as conn:
                write(conn, user.id, role)
                core.log(
                    subject, event, f"user:{user_name}", True, "administrator", conn, role=role
                )

    def users(self, subject: Subject) -> list[User]:
        snapshot = self.core.require_admin(subject, "user_list")
        return sorted(snapshot.users.values(), key=lambda u: u.name)

    def roles(self, subject: Subject) -> list[str]:
        return sorted(self.core.require_admin(subject, "role_list").roles)
