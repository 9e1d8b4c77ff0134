"""The SQL over the catalog's tables, each statement with parameters and never with user text.

The audit trail (``audit.py``), the change tracking triggers (``changelog.py``) and the
migrations and pragmas (``store.py``) keep their own few statements next to what they do.

Functions take an open connection (inside a ``Store.transaction``) so a caller composes several
of them into one atomic change. The SQL is what SQLite and PostgreSQL both accept; the one
difference is asked of the connection's dialect (``catalog.dialect``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from boxes.punctuations.words import MAX_ROLE_BITS as MAX_ROLE_BITS  # migration 0011
from catalog.model import Action, CatalogObject, Grant, ObjectType, Session, User


@dataclass(frozen=True)
class SubjectRows:
    """Who may act: users with the roles they can play, roles, and open sessions by token hash."""

    users: tuple[User, ...]
    roles: tuple[str, ...]
    sessions: tuple[tuple[str, Session], ...]


@dataclass(frozen=True)
class ObjectRows:
    """What may be acted on: the owned objects and the explicit grants on them."""

    objects: tuple[CatalogObject, ...]
    grants: tuple[Grant, ...]


def load_subjects(conn) -> SubjectRows:
    user_roles: dict[int, set[str]] = {}
    for user_id, role in conn.execute("SELECT user_id, role FROM user_roles"):
        user_roles.setdefault(user_id, set()).add(role)
    users = tuple(
        User(i, n, bool(e), frozenset(user_roles.get(i, ())))
        for i, n, e in conn.execute("SELECT id, name, enabled FROM users")
    )
    roles = tuple(r for (r,) in conn.execute("SELECT name FROM roles ORDER BY name"))
    session_roles: dict[int, set[str]] = {}
    for sid, role in conn.execute("SELECT session_id, role FROM session_roles"):
        session_roles.setdefault(sid, set()).add(role)
    sessions = tuple(
        (h, Session(i, u, frozenset(session_roles.get(i, ())), exp))
        for i, h, u, exp in conn.execute("SELECT id, token_hash, user_id, expires_at FROM sessions")
    )
    return SubjectRows(users, roles, sessions)


def load_objects(conn, ids: Iterable[int] | None = None) -> ObjectRows:
    """Every object and grant, or only those of the objects ``ids`` (the ones that still exist).

    The ids travel as one JSON parameter, so any number of them fits one statement.
    """
    params = () if ids is None else (json.dumps(sorted(ids)),)

    def of(column: str) -> str:
        return "" if ids is None else f" WHERE {conn.dialect.ids_in(column)}"

    refs: dict[int, list[int]] = {}
    for from_id, to_id in conn.execute(
        f"SELECT from_id, to_id FROM object_refs{of('from_id')} ORDER BY to_id", params
    ):
        refs.setdefault(from_id, []).append(to_id)
    types = {t.value: t for t in ObjectType}
    objects = tuple(
        CatalogObject(
            id=i,
            type=types[t],
            name=n,
            kind=k,
            parent_id=p,
            owner_user=ou,
            owner_role=orole,
            source_index=si,
            spec=spec,
            status=st,
            created_at=at,
            refs=tuple(refs.get(i, ())),
            public_name=pn,
        )
        for i, t, n, k, p, ou, orole, si, spec, st, at, pn in conn.execute(
            "SELECT id, type, name, kind, parent_id, owner_user, owner_role, source_index, spec,"
            f" status, created_at, public_name FROM objects{of('id')} ORDER BY id",
            params,
        )
    )
    grants = tuple(
        Grant(r, Action(a), o, by)
        for r, a, o, by in conn.execute(
            f"SELECT role, action, object_id, granted_by FROM permissions{of('object_id')}"
            " ORDER BY object_id, role, action",
            params,
        )
    )
    return ObjectRows(objects, grants)


def insert_user(conn, name: str, password_hash: str, enabled: bool, at: float) -> int:
    return conn.execute(
        "INSERT INTO users (name, password_hash, enabled, created_at) VALUES (?, ?, ?, ?)"
        " RETURNING id",
        (name, password_hash, int(enabled), at),
    ).fetchone()[0]


def password_hash(conn, name: str) -> tuple[int, str, bool] | None:
    return conn.execute(
        "SELECT id, password_hash, enabled FROM users WHERE name = ?", (name,)
    ).fetchone()


def set_password_hash(conn, user_id: int, password_hash: str) -> None:
    conn.execute("UPDATE users SET password_hash = ? WHERE id = ?", (password_hash, user_id))


def set_enabled(conn, user_id: int, enabled: bool) -> None:
    conn.execute("UPDATE users SET enabled = ? WHERE id = ?", (int(enabled), user_id))


def delete_user(conn, user_id: int) -> None:
    conn.execute("DELETE FROM users WHERE id = ?", (user_id,))


def insert_role(conn, name: str, at: float) -> None:
    """A new role, with the next policy-label bit (``role_bits``) while any of the
    ``MAX_ROLE_BITS`` is left."""
    conn.execute("INSERT INTO roles (name, created_at) VALUES (?, ?)", (name, at))
    (bit,) = conn.execute(
        "UPDATE counters SET value = value + 1 WHERE name = 'role_bit' RETURNING value - 1"
    ).fetchone()
    if bit < MAX_ROLE_BITS:
        conn.execute("INSERT INTO role_bits (role, bit) VALUES (?, ?)", (name, bit))


def delete_role(conn, name: str) -> None:
    conn.execute("DELETE FROM roles WHERE name = ?", (name,))


def assign_role(conn, user_id: int, role: str) -> None:
    conn.execute(
        "INSERT INTO user_roles (user_id, role) VALUES (?, ?) ON CONFLICT DO NOTHING",
        (user_id, role),
    )


def unassign_role(conn, user_id: int, role: str) -> None:
    """Also drop the role from the user's open sessions: it stops working at once."""
    conn.execute("DELETE FROM user_roles WHERE user_id = ? AND role = ?", (user_id, role))
    conn.execute(
        "DELETE FROM session_roles WHERE role = ? AND session_id IN"
        " (SELECT id FROM sessions WHERE user_id = ?)",
        (role, user_id),
    )


def insert_session(
    conn, token_hash: str, user_id: int, roles: Iterable[str], at: float, expires_at: float
) -> int:
    sid = conn.execute(
        "INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)"
        " RETURNING id",
        (token_hash, user_id, at, expires_at),
    ).fetchone()[0]
    conn.executemany(
        "INSERT INTO session_roles (session_id, role) VALUES (?, ?)", [(sid, r) for r in roles]
    )
    return sid


def delete_session(conn, session_id: int) -> None:
    conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))


def end_sessions_of(conn, user_id: int, keep: int | None = None) -> int:
    """End every session of the user, but ``keep`` (the session asking, when it is the user)."""
    return conn.execute(
        "DELETE FROM sessions WHERE user_id = ? AND id <> COALESCE(?, 0)", (user_id, keep)
    ).rowcount


def purge_expired_sessions(conn, now: float) -> int:
    return conn.execute("DELETE FROM sessions WHERE expires_at <= ?", (now,)).rowcount


def catalog_version(conn) -> int:
    return conn.execute("SELECT value FROM counters WHERE name = 'catalog_version'").fetchone()[0]


def bump_catalog_version(conn) -> int:
    (value,) = conn.execute(
        "UPDATE counters SET value = value + 1 WHERE name = 'catalog_version' RETURNING value"
    ).fetchone()
    return value


def next_source_index(conn) -> int:
    (value,) = conn.execute(
        "UPDATE counters SET value = value + 1 WHERE name = 'source_index' RETURNING value - 1"
    ).fetchone()
    return value


INSERT_OBJECT = (
    "INSERT INTO objects (type, name, kind, parent_id, owner_user, owner_role,"
    " source_index, spec, status, created_at, public_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def insert_object(conn, obj: CatalogObject) -> int:
    return conn.execute(
        INSERT_OBJECT + " RETURNING id",
        (
            obj.type.value,
            obj.name,
            obj.kind,
            obj.parent_id,
            obj.owner_user,
            obj.owner_role,
            obj.source_index,
            obj.spec,
            obj.status,
            obj.created_at,
            obj.public_name,
        ),
    ).fetchone()[0]


def insert_members(
    conn,
    diagram: CatalogObject,
    members: Iterable[tuple[ObjectType, str, str | None, str | None]],
) -> None:
    """A diagram's boxes, streams and outputs (type, key, public name, kind), owned like the
    diagram and created with it, in one statement run: a large diagram is one round trip, not
    hundreds."""
    conn.executemany(
        INSERT_OBJECT,
        [
            (
                type_.value,
                name,
                kind,
                diagram.id,
                diagram.owner_user,
                diagram.owner_role,
                None,
                None,
                None,
                diagram.created_at,
                public_name,
            )
            for type_, name, public_name, kind in members
        ],
    )


def insert_refs(conn, from_id: int, to_ids: Iterable[int]) -> None:
    conn.executemany(
        "INSERT INTO object_refs (from_id, to_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
        [(from_id, to_id) for to_id in to_ids],
    )


def delete_object(conn, object_id: int) -> None:
    conn.execute("DELETE FROM objects WHERE id = ?", (object_id,))


def set_status(conn, object_id: int, status: str) -> None:
    conn.execute("UPDATE objects SET status = ? WHERE id = ?", (status, object_id))


def set_owner(conn, object_id: int, user: str, role: str) -> None:
    """The object and everything inside it (a diagram's boxes and outputs) change hands."""
    conn.execute(
        "UPDATE objects SET owner_user = ?, owner_role = ? WHERE id = ? OR parent_id = ?",
        (user, role, object_id, object_id),
    )


def insert_grant(conn, grant: Grant, at: float) -> bool:
    return (
        conn.execute(
            "INSERT INTO permissions (role, action, object_id, granted_by, granted_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (grant.role, grant.action.value, grant.object_id, grant.granted_by, at),
        ).rowcount
        == 1
    )


def delete_grant(conn, role: str, action: Action, object_id: int) -> bool:
    return (
        conn.execute(
            "DELETE FROM permissions WHERE role = ? AND action = ? AND object_id = ?",
            (role, action.value, object_id),
        ).rowcount
        == 1
    )


def load_system_settings(conn) -> dict[str, Any]:
    """The system settings an administrator changed (values are stored as JSON)."""
    return {
        name: json.loads(value)
        for name, value in conn.execute("SELECT name, value FROM system_settings")
    }


def set_system_setting(conn, name: str, value: Any, by: str, at: float) -> None:
    conn.execute(
        "INSERT INTO system_settings (name, value, changed_by, changed_at)"
        " VALUES (?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value,"
        " changed_by = excluded.changed_by, changed_at = excluded.changed_at",
        (name, json.dumps(value), by, at),
    )


def delete_system_setting(conn, name: str) -> None:
    conn.execute("DELETE FROM system_settings WHERE name = ?", (name,))


def load_role_limits(conn) -> dict[str, dict[str, float]]:
    """Per role, the limits it carries on box parameters (``boxes.cost.PARAMETERS``)."""
    out: dict[str, dict[str, float]] = {}
    for role, parameter, value in conn.execute(
        "SELECT role, parameter, value FROM role_limits ORDER BY role, parameter"
    ):
        out.setdefault(role, {})[parameter] = value
    return out


def set_role_limit(conn, role: str, parameter: str, value: float, by: str, at: float) -> None:
    conn.execute(
        "INSERT INTO role_limits (role, parameter, value, changed_by, changed_at)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (role, parameter) DO UPDATE SET"
        " value = excluded.value, changed_by = excluded.changed_by,"
        " changed_at = excluded.changed_at",
        (role, parameter, value, by, at),
    )


def delete_role_limit(conn, role: str, parameter: str) -> None:
    conn.execute("DELETE FROM role_limits WHERE role = ? AND parameter = ?", (role, parameter))


@dataclass(frozen=True)
class LevelRows:
    """The Chinese-Wall tables (``catalog.clearance``): classes in creation order with their
    companies and bits, stream companies, user organisations and role clearances."""

    classes: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]
    streams: tuple[tuple[int, str | None], ...]
    organisations: tuple[tuple[int, str], ...]
    clearances: tuple[tuple[str, str, str], ...]


def load_levels(conn) -> LevelRows:
    companies: dict[str, list[tuple[str, int]]] = {}
    for name, coi, bit in conn.execute("SELECT name, coi, bit FROM companies ORDER BY bit"):
        companies.setdefault(coi, []).append((name, bit))
    classes = tuple(
        (name, tuple(companies.get(name, ())))
        for (name,) in conn.execute("SELECT name FROM coi_classes ORDER BY id")
    )
    return LevelRows(
        classes,
        tuple(conn.execute("SELECT stream_id, company FROM stream_levels ORDER BY stream_id")),
        tuple(conn.execute("SELECT user_id, company FROM user_organisations ORDER BY user_id")),
        tuple(conn.execute("SELECT role, coi, entry FROM role_clearances ORDER BY role, coi")),
    )


def insert_coi_class(conn, name: str, at: float) -> None:
    conn.execute("INSERT INTO coi_classes (name, created_at) VALUES (?, ?)", (name, at))


def delete_coi_class(conn, name: str) -> bool:
    return conn.execute("DELETE FROM coi_classes WHERE name = ?", (name,)).rowcount == 1


def next_company_bit(conn) -> int:
    (bit,) = conn.execute("SELECT value FROM counters WHERE name = 'company_bit'").fetchone()
    conn.execute("UPDATE counters SET value = value + 1 WHERE name = 'company_bit'")
    return bit


def insert_company(conn, name: str, coi: str, bit: int, at: float) -> None:
    conn.execute(
        "INSERT INTO companies (name, coi, bit, created_at) VALUES (?, ?, ?, ?)",
        (name, coi, bit, at),
    )


def delete_company(conn, name: str) -> bool:
    return conn.execute("DELETE FROM companies WHERE name = ?", (name,)).rowcount == 1


def company_uses(conn, name: str) -> int:
    """How many streams, organisations and clearances name a company."""
    (count,) = conn.execute(
        "SELECT (SELECT count(*) FROM stream_levels WHERE company = ?)"
        " + (SELECT count(*) FROM user_organisations WHERE company = ?)"
        " + (SELECT count(*) FROM role_clearances WHERE entry = ?)",
        (name, name, name),
    ).fetchone()
    return count


def set_stream_level(conn, stream_id: int, company: str | None, multilevel: bool) -> None:
    conn.execute("DELETE FROM stream_levels WHERE stream_id = ?", (stream_id,))
    if company is not None or multilevel:
        conn.execute(
            "INSERT INTO stream_levels (stream_id, company, multilevel) VALUES (?, ?, ?)",
            (stream_id, company, int(multilevel)),
        )


def set_organisation(conn, user_id: int, company: str | None) -> None:
    conn.execute("DELETE FROM user_organisations WHERE user_id = ?", (user_id,))
    if company is not None:
        conn.execute(
            "INSERT INTO user_organisations (user_id, company) VALUES (?, ?)", (user_id, company)
        )


def set_clearance(conn, role: str, level: dict[str, str], by: str, at: float) -> None:
    conn.execute("DELETE FROM role_clearances WHERE role = ?", (role,))
    conn.executemany(
        "INSERT INTO role_clearances (role, coi, entry, changed_by, changed_at)"
        " VALUES (?, ?, ?, ?, ?)",
        [(role, coi, entry, by, at) for coi, entry in sorted(level.items())],
    )


@dataclass(frozen=True)
class DiagramVersion:
    diagram: str
    version: int
    spec: str | None
    saved_by: str
    saved_role: str
    saved_at: float


VERSION_COLUMNS = "diagram, version, spec, saved_by, saved_role, saved_at"


def insert_diagram_version(conn, diagram: CatalogObject, keep: int) -> None:
    """The diagram's document as its next version; only the newest ``keep`` stay."""
    conn.execute(
        f"INSERT INTO diagram_versions ({VERSION_COLUMNS})"
        " SELECT ?, COALESCE(MAX(version), 0) + 1, ?, ?, ?, ? FROM diagram_versions"
        " WHERE diagram = ?",
        (
            diagram.name,
            diagram.spec,
            diagram.owner_user,
            diagram.owner_role,
            diagram.created_at,
            diagram.name,
        ),
    )
    conn.execute(
        "DELETE FROM diagram_versions WHERE diagram = ? AND version <= "
        "(SELECT MAX(version) FROM diagram_versions WHERE diagram = ?) - ?",
        (diagram.name, diagram.name, keep),
    )


def delete_diagram_versions(conn, diagram: str) -> None:
    conn.execute("DELETE FROM diagram_versions WHERE diagram = ?", (diagram,))


def diagram_versions(conn, diagram: str) -> list[DiagramVersion]:
    """Newest first."""
    rows = conn.execute(
        f"SELECT {VERSION_COLUMNS} FROM diagram_versions WHERE diagram = ? ORDER BY version DESC",
        (diagram,),
    )
    return [DiagramVersion(*row) for row in rows]


def diagram_version(conn, diagram: str, version: int) -> DiagramVersion | None:
    row = conn.execute(
        f"SELECT {VERSION_COLUMNS} FROM diagram_versions WHERE diagram = ? AND version = ?",
        (diagram, version),
    ).fetchone()
    return DiagramVersion(*row) if row else None


@dataclass(frozen=True)
class PolicyRows:
    """The access-control policies (name, JSON item) by name, and the users' attributes."""

    policies: tuple[tuple[str, str], ...]
    attributes: tuple[tuple[int, str, str], ...]


def load_policies(conn) -> PolicyRows:
    return PolicyRows(
        tuple(conn.execute("SELECT name, item FROM access_policies ORDER BY name")),
        tuple(conn.execute("SELECT user_id, name, value FROM user_attributes ORDER BY 1, 2")),
    )


def put_policy(conn, name: str, role: str, item: str, by: str, at: float) -> bool:
    """Insert or replace a policy; True if one of that name was there."""
    existed = conn.execute("DELETE FROM access_policies WHERE name = ?", (name,)).rowcount == 1
    conn.execute(
        "INSERT INTO access_policies (name, role, item, changed_by, changed_at)"
        " VALUES (?, ?, ?, ?, ?)",
        (name, role, item, by, at),
    )
    return existed


def delete_policy(conn, name: str) -> bool:
    return conn.execute("DELETE FROM access_policies WHERE name = ?", (name,)).rowcount == 1


def set_attributes(conn, user_id: int, values: dict[str, str]) -> None:
    conn.execute("DELETE FROM user_attributes WHERE user_id = ?", (user_id,))
    conn.executemany(
        "INSERT INTO user_attributes (user_id, name, value) VALUES (?, ?, ?)",
        [(user_id, k, v) for k, v in sorted(values.items())],
    )


@dataclass(frozen=True)
class RewriteRow:
    """The rewrite a running diagram was deployed with (``catalog.rewrites``)."""

    diagram_id: int
    deployer: str
    roles: str
    document: str
    added: str
    stale: str | None
    at: float


def put_rewrite(conn, row: RewriteRow) -> None:
    conn.execute("DELETE FROM diagram_rewrites WHERE diagram_id = ?", (row.diagram_id,))
    conn.execute(
        "INSERT INTO diagram_rewrites (diagram_id, deployer, roles, document, added, stale, at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (row.diagram_id, row.deployer, row.roles, row.document, row.added, row.stale, row.at),
    )


def get_rewrite(conn, diagram_id: int) -> RewriteRow | None:
    found = conn.execute(
        "SELECT diagram_id, deployer, roles, document, added, stale, at FROM diagram_rewrites"
        " WHERE diagram_id = ?",
        (diagram_id,),
    ).fetchone()
    return RewriteRow(*found) if found else None


def delete_rewrite(conn, diagram_id: int) -> None:
    conn.execute("DELETE FROM diagram_rewrites WHERE diagram_id = ?", (diagram_id,))


def mark_rewrite_stale(conn, diagram_id: int, reason: str) -> None:
    conn.execute("UPDATE diagram_rewrites SET stale = ? WHERE diagram_id = ?", (reason, diagram_id))


@dataclass(frozen=True)
class PunctuationRows:
    """Security punctuations' tables: each role's label bit and the governed streams with
    their tuple identifier field (None: none) and server policy (JSON; None: none)."""

    role_bits: tuple[tuple[str, int], ...]
    governed: tuple[tuple[int, str | None, str | None], ...]


def load_punctuations(conn) -> PunctuationRows:
    return PunctuationRows(
        tuple(conn.execute("SELECT role, bit FROM role_bits ORDER BY bit")),
        tuple(
            conn.execute(
                "SELECT stream_id, tid_field, server_policy FROM governed_streams"
                " ORDER BY stream_id"
            )
        ),
    )


def set_governed(
    conn, stream_id: int, governed: bool, tid_field: str | None, by: str, at: float
) -> None:
    """Govern a stream (keeping its server policy if it was governed) or stop (dropping it)."""
    if not governed:
        conn.execute("DELETE FROM governed_streams WHERE stream_id = ?", (stream_id,))
        return
    changed = conn.execute(
        "UPDATE governed_streams SET tid_field = ?, changed_by = ?, changed_at = ?"
        " WHERE stream_id = ?",
        (tid_field, by, at, stream_id),
    )
    if changed.rowcount == 0:
        conn.execute(
            "INSERT INTO governed_streams (stream_id, tid_field, changed_by, changed_at)"
            " VALUES (?, ?, ?, ?)",
            (stream_id, tid_field, by, at),
        )


def get_role_words(conn, diagram_id: int) -> int | None:
    found = conn.execute(
        "SELECT words FROM diagram_role_words WHERE diagram_id = ?", (diagram_id,)
    ).fetchone()
    return found[0] if found else None


def put_role_words(conn, diagram_id: int, words: int) -> None:
    conn.execute(
        "INSERT INTO diagram_role_words (diagram_id, words) VALUES (?, ?)"
        " ON CONFLICT (diagram_id) DO UPDATE SET words = excluded.words",
        (diagram_id, words),
    )


def set_server_policy(conn, stream_id: int, policy: str | None, by: str, at: float) -> None:
    conn.execute(
        "UPDATE governed_streams SET server_policy = ?, changed_by = ?, changed_at = ?"
        " WHERE stream_id = ?",
        (policy, by, at, stream_id),
    )
