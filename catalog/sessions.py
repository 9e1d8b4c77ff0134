"""The authenticator and session manager: login, logout, token to subject, readable source set.

Tokens are random and only their SHA-256 is stored, so a copy of the database opens no session.
Every credential failure (unknown user, wrong password, disabled user) gives the same error; the
audit log records which one it was. A password hashed with fewer bcrypt rounds than configured
is hashed again at its next successful login, so raising the cost reaches every account.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable

from boxes import codes
from boxes.errors import Denied, InvalidInput, Unauthenticated
from catalog import passwords, repository
from catalog.authorizer import active_roles
from catalog.core import INVALID_CREDENTIALS, INVALID_SESSION, Core
from catalog.model import Subject
from catalog.snapshot import Snapshot


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Sessions:
    def __init__(self, core: Core) -> None:
        self.core = core

    def login(
        self, name: str, password: str, roles: Iterable[str] | None = None
    ) -> tuple[str, Subject]:
        """Open a session with ``roles`` active (None: all the user can play); return its token."""
        core = self.core
        known = isinstance(name, str) and "\0" not in name  # no name holds one
        with core.store.reader() as conn:
            row = repository.password_hash(conn, name) if known else None
        ok = passwords.verify(
            password, row[1] if row else passwords.dummy_hash(core.settings.bcrypt_rounds)
        )
        user = core.snapshot.users.get(row[0]) if row else None
        if row and user is None:  # just added, by another server whose notice is on its way
            user = core.catch_up().users.get(row[0])
        if not ok or row is None or user is None or not user.enabled:
            why = "unknown user" if row is None else "wrong password" if not ok else "user disabled"
            core.log(None, "login_failed", None, False, why, attempted=str(name)[:64])
            raise Unauthenticated(INVALID_CREDENTIALS)
        wanted = (
            user.roles
            if roles is None
            else frozenset((roles,) if isinstance(roles, str) else roles)
        )
        if not wanted:
            raise InvalidInput(code=codes.ROLES_EMPTY)
        if not wanted <= user.roles:
            core.log(
                None,
                "login_failed",
                None,
                False,
                "asked for roles it cannot play",
                attempted=user.name,
                roles=sorted(str(r)[:64] for r in wanted - user.roles),
            )
            raise Denied(
                code=codes.ROLE_NOT_PLAYABLE,
                user=user.name,
                roles=", ".join(sorted(str(r)[:64] for r in wanted - user.roles)),
            )
        token = secrets.token_urlsafe(32)
        rounds = core.settings.bcrypt_rounds
        rehashed = (
            passwords.hash_password(password, rounds)
            if passwords.weaker_than(row[1], rounds)
            else None
        )
        at = core.clock()
        with core.change() as conn:
            repository.purge_expired_sessions(conn, at)
            if rehashed:
                repository.set_password_hash(conn, user.id, rehashed)
            sid = repository.insert_session(
                conn, token_hash(token), user.id, wanted, at, at + core.settings.session_ttl
            )
            subject = Subject(sid, user.id, user.name, wanted)
            core.log(subject, "login", f"session:{sid}", True, "password verified", conn)
        return token, subject

    def resolve(self, token: object) -> Subject:
        """The subject a token stands for, if its session is open and unexpired. Every request
        and socket event starts here, so it first brings the snapshot up to every change
        committed before it on any server (``Core.current``: one look at a shared database,
        nothing on SQLite): a list then shows what another server made a moment ago, and a
        right revoked there no longer holds here, whether or not its notice has come."""
        self.core.current()

        def open_(snapshot: Snapshot) -> Subject:
            hashed = token_hash(token) if isinstance(token, str) else None
            session = snapshot.sessions_by_token.get(hashed) if hashed else None
            user = snapshot.users.get(session.user_id) if session else None
            if session is None or user is None:
                raise Unauthenticated(INVALID_SESSION)
            return self.core.valid(Subject(session.id, user.id, user.name, session.roles), snapshot)

        return self.core.decided(open_)

    def logout(self, subject: Subject) -> None:
        core = self.core
        core.valid(subject, core.snapshot)
        with core.change() as conn:
            repository.delete_session(conn, subject.session_id)
            core.log(subject, "logout", f"session:{subject.session_id}", True, "logged out", conn)

    def readable_sources(self, subject: Subject | None) -> int:
        """Bit i set iff an active role may READ_TUPLE the input stream with source index i.

        Zero for an ended, expired or disabled session: the SecFilter then delivers nothing.
        """
        return self.source_rights(subject)[0]

    def source_rights(self, subject: Subject | None) -> tuple[int, int]:
        """``source_rights`` in the current snapshot, now."""
        return source_rights(subject, self.core.snapshot, self.core.clock())


def source_rights(subject: Subject | None, snapshot: Snapshot, now: float) -> tuple[int, int]:
    """The source bits an active role may READ_TUPLE, and those it may READ_AGGREGATE, in
    ``snapshot`` at time ``now``; (0, 0) for an ended, expired or disabled session. Pure, so a
    batch's every check can be read from the one snapshot it is decided on."""
    roles = active_roles(subject, snapshot)
    if subject is None or not roles or snapshot.sessions[subject.session_id].expires_at <= now:
        return 0, 0
    tuples = aggregates = 0
    for role in roles:
        tuples |= snapshot.read_masks.get(role, 0)
        aggregates |= snapshot.aggregate_masks.get(role, 0)
    return tuples, aggregates
