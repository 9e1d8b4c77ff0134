"""Who may act: users, roles (each with its policy-label bit), the roles each user may play,
and sessions with the roles they were opened with."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import delete, insert, select, update

from boxes.punctuations.words import MAX_ROLE_BITS  # the baseline's role_bits
from catalog.model import Session, User
from catalog.repository._common import _counter, _insert_many, _insert_new
from catalog.schema import counters, role_bits, roles, session_roles, sessions, user_roles, users


@dataclass(frozen=True)
class SubjectRows:
    """Who may act: users with the roles they can play, roles, and open sessions by token hash."""

    users: tuple[User, ...]
    roles: tuple[str, ...]
    sessions: tuple[tuple[str, Session], ...]


def load_subjects(conn) -> SubjectRows:
    user_roles_of: dict[int, set[str]] = {}
    for user_id, role in conn.execute(select(user_roles.c.user_id, user_roles.c.role)):
        user_roles_of.setdefault(user_id, set()).add(role)
    users_found = tuple(
        User(i, n, bool(e), frozenset(user_roles_of.get(i, ())))
        for i, n, e in conn.execute(select(users.c.id, users.c.name, users.c.enabled))
    )
    roles_found = tuple(conn.execute(select(roles.c.name).order_by(roles.c.name)).scalars())
    session_roles_of: dict[int, set[str]] = {}
    for sid, role in conn.execute(select(session_roles.c.session_id, session_roles.c.role)):
        session_roles_of.setdefault(sid, set()).add(role)
    sessions_found = tuple(
        (h, Session(i, u, frozenset(session_roles_of.get(i, ())), exp))
        for i, h, u, exp in conn.execute(
            select(sessions.c.id, sessions.c.token_hash, sessions.c.user_id, sessions.c.expires_at)
        )
    )
    return SubjectRows(users_found, roles_found, sessions_found)


def insert_user(conn, name: str, password_hash: str, enabled: bool, at: float) -> int:
    return conn.execute(
        insert(users)
        .values(name=name, password_hash=password_hash, enabled=int(enabled), created_at=at)
        .returning(users.c.id)
    ).scalar_one()


def password_hash(conn, name: str) -> tuple[int, str, bool] | None:
    row = conn.execute(
        select(users.c.id, users.c.password_hash, users.c.enabled).where(users.c.name == name)
    ).first()
    return None if row is None else tuple(row)


def set_password_hash(conn, user_id: int, password_hash: str) -> None:
    conn.execute(update(users).where(users.c.id == user_id).values(password_hash=password_hash))


def set_enabled(conn, user_id: int, enabled: bool) -> None:
    conn.execute(update(users).where(users.c.id == user_id).values(enabled=int(enabled)))


def delete_user(conn, user_id: int) -> None:
    conn.execute(delete(users).where(users.c.id == user_id))


def insert_role(conn, name: str, at: float) -> None:
    """A new role, with the next policy-label bit (``role_bits``) while any of the
    ``MAX_ROLE_BITS`` is left."""
    conn.execute(insert(roles).values(name=name, created_at=at))
    bit = conn.execute(
        update(counters)
        .where(_counter("role_bit"))
        .values(value=counters.c.value + 1)
        .returning(counters.c.value - 1)
    ).scalar_one()
    if bit < MAX_ROLE_BITS:
        conn.execute(insert(role_bits).values(role=name, bit=bit))


def delete_role(conn, name: str) -> None:
    conn.execute(delete(roles).where(roles.c.name == name))


def assign_role(conn, user_id: int, role: str) -> None:
    conn.execute(_insert_new(conn.dialect.name, user_roles), {"user_id": user_id, "role": role})


def unassign_role(conn, user_id: int, role: str) -> None:
    """Also drop the role from the user's open sessions: it stops working at once."""
    conn.execute(
        delete(user_roles).where(user_roles.c.user_id == user_id, user_roles.c.role == role)
    )
    conn.execute(
        delete(session_roles).where(
            session_roles.c.role == role,
            session_roles.c.session_id.in_(
                select(sessions.c.id).where(sessions.c.user_id == user_id)
            ),
        )
    )


def insert_session(
    conn, token_hash: str, user_id: int, roles: Iterable[str], at: float, expires_at: float
) -> int:
    sid = conn.execute(
        insert(sessions)
        .values(token_hash=token_hash, user_id=user_id, created_at=at, expires_at=expires_at)
        .returning(sessions.c.id)
    ).scalar_one()
    _insert_many(conn, session_roles, [{"session_id": sid, "role": r} for r in roles])
    return sid


def delete_session(conn, session_id: int) -> None:
    conn.execute(delete(sessions).where(sessions.c.id == session_id))


def end_sessions_of(conn, user_id: int, keep: int | None = None) -> int:
    """End every session of the user, but ``keep`` (the session asking, when it is the user)."""
    return conn.execute(
        delete(sessions).where(sessions.c.user_id == user_id, sessions.c.id != (keep or 0))
    ).rowcount


def purge_expired_sessions(conn, now: float) -> int:
    return conn.execute(delete(sessions).where(sessions.c.expires_at <= now)).rowcount
