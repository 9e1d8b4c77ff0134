"""Every statement over the catalog's tables, as SQLAlchemy Core constructs with named binds:
each database's dialect compiles them, and no statement is ever text with user input in it.

Functions take an open connection (inside a ``Store.transaction``, or a ``Store.reader``) so
a caller composes several of them into one atomic change. The few things the two databases
say differently are asked of SQLAlchemy's dialects: an upsert (``_insert``), the database's
clock (``db_now``), and, for the stores, their pragmas and locks (at the end).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    Connection,
    MetaData,
    Table,
    Text,
    bindparam,
    cast,
    column,
    delete,
    func,
    insert,
    inspect,
    literal,
    or_,
    select,
    table,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import FunctionElement

from boxes.punctuations.words import MAX_ROLE_BITS as MAX_ROLE_BITS  # the baseline's role_bits
from catalog.model import Action, CatalogObject, Grant, ObjectType, Session, User
from catalog.schema import (
    FLOAT,
    access_policies,
    audit,
    coi_classes,
    companies,
    counters,
    diagram_rewrites,
    diagram_role_words,
    governed_streams,
    leases,
    object_refs,
    objects,
    permissions,
    role_bits,
    role_clearances,
    role_limits,
    roles,
    session_roles,
    sessions,
    stream_levels,
    system_settings,
    touched,
    user_attributes,
    user_organisations,
    user_roles,
    users,
)
from catalog.schema import diagram_versions as versions


class db_now(FunctionElement):
    """The database's clock in seconds since the epoch: servers whose own clocks differ still
    agree on when a lease ends."""

    type = FLOAT
    inherit_cache = True


@compiles(db_now, "sqlite")
def _sqlite_now(element: db_now, compiler: Any, **kw: Any) -> str:
    return "((julianday('now') - 2440587.5) * 86400.0)"


@compiles(db_now, "postgresql")
def _postgresql_now(element: db_now, compiler: Any, **kw: Any) -> str:
    return "extract(epoch from clock_timestamp())::double precision"


def _insert(conn: Connection, target: Table) -> Any:
    """An INSERT that can say ON CONFLICT, in the connection's dialect."""
    return (sqlite if conn.dialect.name == "sqlite" else postgresql).insert(target)


def _upsert(conn: Connection, target: Table, keys: tuple[str, ...], row: dict[str, Any]) -> None:
    """Insert ``row``, or update the row of the same ``keys`` with its other values."""
    stmt = _insert(conn, target).values(row)
    conn.execute(
        stmt.on_conflict_do_update(
            index_elements=list(keys),
            set_={name: stmt.excluded[name] for name in row if name not in keys},
        )
    )


def _insert_many(conn: Connection, target: Table, rows: list[dict[str, Any]]) -> None:
    if rows:
        conn.execute(insert(target), rows)


def _counter(name: str):
    return counters.c.name == name


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


OBJECT_COLUMNS = (
    objects.c.id,
    objects.c.type,
    objects.c.name,
    objects.c.kind,
    objects.c.parent_id,
    objects.c.owner_user,
    objects.c.owner_role,
    objects.c.source_index,
    objects.c.spec,
    objects.c.status,
    objects.c.created_at,
    objects.c.public_name,
)


IDS = bindparam("ids", type_=Text)  # a JSON array of ids: any number fits one statement


def _id_rows(dialect: str) -> Any:
    """The ids of ``IDS`` as rows, by each database's own JSON function."""
    if dialect == "sqlite":
        return select(func.json_each(IDS).table_valued("value").c.value)
    rows = func.json_array_elements_text(cast(IDS, JSON)).table_valued("value")
    return select(cast(rows.c.value, BigInteger))


@cache
def _object_queries(dialect: str, among: bool) -> tuple[Any, Any, Any]:
    """Refs, objects and grants: all, or those of the objects ``IDS`` names (``among``)."""

    def of(query: Any, key: Any) -> Any:
        return query.where(key.in_(_id_rows(dialect))) if among else query

    grant_columns = (
        permissions.c.role,
        permissions.c.action,
        permissions.c.object_id,
        permissions.c.granted_by,
    )
    return (
        of(select(object_refs.c.from_id, object_refs.c.to_id), object_refs.c.from_id).order_by(
            object_refs.c.to_id
        ),
        of(select(*OBJECT_COLUMNS), objects.c.id).order_by(objects.c.id),
        of(select(*grant_columns), permissions.c.object_id).order_by(
            permissions.c.object_id, permissions.c.role, permissions.c.action
        ),
    )


def load_objects(conn, ids: Iterable[int] | None = None) -> ObjectRows:
    """Every object and grant, or only those of the objects ``ids`` (the ones that still exist)."""
    params = {} if ids is None else {"ids": json.dumps(sorted(ids))}
    refs_query, objects_query, grants_query = _object_queries(conn.dialect.name, ids is not None)
    refs: dict[int, list[int]] = {}
    for from_id, to_id in conn.execute(refs_query, params):
        refs.setdefault(from_id, []).append(to_id)
    types = {t.value: t for t in ObjectType}
    found = tuple(
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
        for i, t, n, k, p, ou, orole, si, spec, st, at, pn in conn.execute(objects_query, params)
    )
    grants = tuple(Grant(r, Action(a), o, by) for r, a, o, by in conn.execute(grants_query, params))
    return ObjectRows(found, grants)


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
    conn.execute(
        _insert(conn, user_roles).values(user_id=user_id, role=role).on_conflict_do_nothing()
    )


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


# Built once: the statements every change runs (a statement built at each call costs more
# than SQLite takes to run it).
CATALOG_VERSION = select(counters.c.value).where(_counter("catalog_version"))
BUMP = (
    update(counters)
    .where(counters.c.name == bindparam("counter"))
    .values(value=counters.c.value + 1)
    .returning(counters.c.value - 1)
)
INSERT_OBJECT = insert(objects).returning(objects.c.id)
INSERT_AUDIT = insert(audit)
TAKE_TOUCHED = delete(touched).returning(touched.c.what, touched.c.id)


def catalog_version(conn) -> int:
    return conn.execute(CATALOG_VERSION).scalar_one()


def _bump(conn, name: str) -> int:
    """The counter ``name`` moved on by one; its value before."""
    return conn.execute(BUMP, {"counter": name}).scalar_one()


def bump_catalog_version(conn) -> int:
    return _bump(conn, "catalog_version") + 1


def next_source_index(conn) -> int:
    return _bump(conn, "source_index")


def _object_row(obj: CatalogObject) -> dict[str, Any]:
    return {
        "type": obj.type.value,
        "name": obj.name,
        "kind": obj.kind,
        "parent_id": obj.parent_id,
        "owner_user": obj.owner_user,
        "owner_role": obj.owner_role,
        "source_index": obj.source_index,
        "spec": obj.spec,
        "status": obj.status,
        "created_at": obj.created_at,
        "public_name": obj.public_name,
    }


def insert_object(conn, obj: CatalogObject) -> int:
    return conn.execute(INSERT_OBJECT, _object_row(obj)).scalar_one()


def insert_members(
    conn,
    diagram: CatalogObject,
    members: Iterable[tuple[ObjectType, str, str | None, str | None]],
) -> None:
    """A diagram's boxes, streams and outputs (type, key, public name, kind), owned like the
    diagram and created with it, in one statement run: a large diagram is one round trip, not
    hundreds."""
    _insert_many(
        conn,
        objects,
        [
            {
                "type": type_.value,
                "name": name,
                "kind": kind,
                "parent_id": diagram.id,
                "owner_user": diagram.owner_user,
                "owner_role": diagram.owner_role,
                "source_index": None,
                "spec": None,
                "status": None,
                "created_at": diagram.created_at,
                "public_name": public_name,
            }
            for type_, name, public_name, kind in members
        ],
    )


def insert_refs(conn, from_id: int, to_ids: Iterable[int]) -> None:
    rows = [{"from_id": from_id, "to_id": to_id} for to_id in to_ids]
    if rows:
        conn.execute(_insert(conn, object_refs).on_conflict_do_nothing(), rows)


def delete_object(conn, object_id: int) -> None:
    conn.execute(delete(objects).where(objects.c.id == object_id))


def set_status(conn, object_id: int, status: str) -> None:
    conn.execute(update(objects).where(objects.c.id == object_id).values(status=status))


def set_owner(conn, object_id: int, user: str, role: str) -> None:
    """The object and everything inside it (a diagram's boxes and outputs) change hands."""
    conn.execute(
        update(objects)
        .where(or_(objects.c.id == object_id, objects.c.parent_id == object_id))
        .values(owner_user=user, owner_role=role)
    )


def insert_grant(conn, grant: Grant, at: float) -> bool:
    return (
        conn.execute(
            _insert(conn, permissions)
            .values(
                role=grant.role,
                action=grant.action.value,
                object_id=grant.object_id,
                granted_by=grant.granted_by,
                granted_at=at,
            )
            .on_conflict_do_nothing()
            .execution_options(preserve_rowcount=True)  # an INSERT's is kept only if asked
        ).rowcount
        == 1
    )


def delete_grant(conn, role: str, action: Action, object_id: int) -> bool:
    return (
        conn.execute(
            delete(permissions).where(
                permissions.c.role == role,
                permissions.c.action == action.value,
                permissions.c.object_id == object_id,
            )
        ).rowcount
        == 1
    )


def load_system_settings(conn) -> dict[str, Any]:
    """The system settings an administrator changed (values are stored as JSON)."""
    return {
        name: json.loads(value)
        for name, value in conn.execute(select(system_settings.c.name, system_settings.c.value))
    }


def set_system_setting(conn, name: str, value: Any, by: str, at: float) -> None:
    _upsert(
        conn,
        system_settings,
        ("name",),
        {"name": name, "value": json.dumps(value), "changed_by": by, "changed_at": at},
    )


def delete_system_setting(conn, name: str) -> None:
    conn.execute(delete(system_settings).where(system_settings.c.name == name))


def load_role_limits(conn) -> dict[str, dict[str, float]]:
    """Per role, the limits it carries on box parameters (``boxes.cost.PARAMETERS``)."""
    out: dict[str, dict[str, float]] = {}
    for role, parameter, value in conn.execute(
        select(role_limits.c.role, role_limits.c.parameter, role_limits.c.value).order_by(
            role_limits.c.role, role_limits.c.parameter
        )
    ):
        out.setdefault(role, {})[parameter] = value
    return out


def set_role_limit(conn, role: str, parameter: str, value: float, by: str, at: float) -> None:
    _upsert(
        conn,
        role_limits,
        ("role", "parameter"),
        {"role": role, "parameter": parameter, "value": value, "changed_by": by, "changed_at": at},
    )


def delete_role_limit(conn, role: str, parameter: str) -> None:
    conn.execute(
        delete(role_limits).where(role_limits.c.role == role, role_limits.c.parameter == parameter)
    )


@dataclass(frozen=True)
class LevelRows:
    """The Chinese-Wall tables (``catalog.clearance``): classes in creation order with their
    companies and bits, stream companies, user organisations and role clearances."""

    classes: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]
    streams: tuple[tuple[int, str | None], ...]
    organisations: tuple[tuple[int, str], ...]
    clearances: tuple[tuple[str, str, str], ...]


def _tuples(conn, query: Any) -> tuple:
    return tuple(tuple(row) for row in conn.execute(query))


def load_levels(conn) -> LevelRows:
    by_class: dict[str, list[tuple[str, int]]] = {}
    for name, coi, bit in conn.execute(
        select(companies.c.name, companies.c.coi, companies.c.bit).order_by(companies.c.bit)
    ):
        by_class.setdefault(coi, []).append((name, bit))
    classes = tuple(
        (name, tuple(by_class.get(name, ())))
        for name in conn.execute(select(coi_classes.c.name).order_by(coi_classes.c.id)).scalars()
    )
    return LevelRows(
        classes,
        _tuples(
            conn,
            select(stream_levels.c.stream_id, stream_levels.c.company).order_by(
                stream_levels.c.stream_id
            ),
        ),
        _tuples(
            conn,
            select(user_organisations.c.user_id, user_organisations.c.company).order_by(
                user_organisations.c.user_id
            ),
        ),
        _tuples(
            conn,
            select(role_clearances.c.role, role_clearances.c.coi, role_clearances.c.entry).order_by(
                role_clearances.c.role, role_clearances.c.coi
            ),
        ),
    )


def coi_class_exists(conn, name: str) -> bool:
    return conn.execute(select(literal(1)).where(coi_classes.c.name == name)).first() is not None


def company_exists(conn, name: str) -> bool:
    return conn.execute(select(literal(1)).where(companies.c.name == name)).first() is not None


def companies_in(conn, coi: str) -> int:
    """How many companies a class holds."""
    return conn.execute(
        select(func.count()).select_from(companies).where(companies.c.coi == coi)
    ).scalar_one()


def insert_coi_class(conn, name: str, at: float) -> None:
    conn.execute(insert(coi_classes).values(name=name, created_at=at))


def delete_coi_class(conn, name: str) -> bool:
    return conn.execute(delete(coi_classes).where(coi_classes.c.name == name)).rowcount == 1


def next_company_bit(conn) -> int:
    return _bump(conn, "company_bit")


def insert_company(conn, name: str, coi: str, bit: int, at: float) -> None:
    conn.execute(insert(companies).values(name=name, coi=coi, bit=bit, created_at=at))


def delete_company(conn, name: str) -> bool:
    return conn.execute(delete(companies).where(companies.c.name == name)).rowcount == 1


def company_uses(conn, name: str) -> int:
    """How many streams, organisations and clearances name a company."""

    def uses(column: Any) -> Any:
        return select(func.count()).where(column == name).scalar_subquery()

    return conn.execute(
        select(
            uses(stream_levels.c.company)
            + uses(user_organisations.c.company)
            + uses(role_clearances.c.entry)
        )
    ).scalar_one()


def set_stream_level(conn, stream_id: int, company: str | None, multilevel: bool) -> None:
    conn.execute(delete(stream_levels).where(stream_levels.c.stream_id == stream_id))
    if company is not None or multilevel:
        conn.execute(
            insert(stream_levels).values(
                stream_id=stream_id, company=company, multilevel=int(multilevel)
            )
        )


def set_organisation(conn, user_id: int, company: str | None) -> None:
    conn.execute(delete(user_organisations).where(user_organisations.c.user_id == user_id))
    if company is not None:
        conn.execute(insert(user_organisations).values(user_id=user_id, company=company))


def set_clearance(conn, role: str, level: dict[str, str], by: str, at: float) -> None:
    conn.execute(delete(role_clearances).where(role_clearances.c.role == role))
    _insert_many(
        conn,
        role_clearances,
        [
            {"role": role, "coi": coi, "entry": entry, "changed_by": by, "changed_at": at}
            for coi, entry in sorted(level.items())
        ],
    )


@dataclass(frozen=True)
class DiagramVersion:
    diagram: str
    version: int
    spec: str | None
    saved_by: str
    saved_role: str
    saved_at: float


VERSION_COLUMNS = (
    versions.c.diagram,
    versions.c.version,
    versions.c.spec,
    versions.c.saved_by,
    versions.c.saved_role,
    versions.c.saved_at,
)


def insert_diagram_version(conn, diagram: CatalogObject, keep: int) -> None:
    """The diagram's document as its next version; only the newest ``keep`` stay."""
    of_diagram = versions.c.diagram == diagram.name
    newest = select(func.max(versions.c.version)).where(of_diagram).scalar_subquery()
    conn.execute(
        insert(versions).from_select(
            [c.name for c in VERSION_COLUMNS],
            select(
                literal(diagram.name, Text),
                func.coalesce(func.max(versions.c.version), 0) + 1,
                literal(diagram.spec, Text),
                literal(diagram.owner_user, Text),
                literal(diagram.owner_role, Text),
                literal(diagram.created_at, FLOAT),
            ).where(of_diagram),
        )
    )
    conn.execute(delete(versions).where(of_diagram, versions.c.version <= newest - keep))


def delete_diagram_versions(conn, diagram: str) -> None:
    conn.execute(delete(versions).where(versions.c.diagram == diagram))


def diagram_versions(conn, diagram: str) -> list[DiagramVersion]:
    """Newest first."""
    rows = conn.execute(
        select(*VERSION_COLUMNS)
        .where(versions.c.diagram == diagram)
        .order_by(versions.c.version.desc())
    )
    return [DiagramVersion(*row) for row in rows]


def diagram_version(conn, diagram: str, version: int) -> DiagramVersion | None:
    row = conn.execute(
        select(*VERSION_COLUMNS).where(versions.c.diagram == diagram, versions.c.version == version)
    ).first()
    return DiagramVersion(*row) if row else None


@dataclass(frozen=True)
class PolicyRows:
    """The access-control policies (name, JSON item) by name, and the users' attributes."""

    policies: tuple[tuple[str, str], ...]
    attributes: tuple[tuple[int, str, str], ...]


def load_policies(conn) -> PolicyRows:
    return PolicyRows(
        _tuples(
            conn,
            select(access_policies.c.name, access_policies.c.item).order_by(access_policies.c.name),
        ),
        _tuples(
            conn,
            select(
                user_attributes.c.user_id, user_attributes.c.name, user_attributes.c.value
            ).order_by(user_attributes.c.user_id, user_attributes.c.name),
        ),
    )


def put_policy(conn, name: str, role: str, item: str, by: str, at: float) -> bool:
    """Insert or replace a policy; True if one of that name was there."""
    existed = delete_policy(conn, name)
    conn.execute(
        insert(access_policies).values(
            name=name, role=role, item=item, changed_by=by, changed_at=at
        )
    )
    return existed


def delete_policy(conn, name: str) -> bool:
    return conn.execute(delete(access_policies).where(access_policies.c.name == name)).rowcount == 1


def set_attributes(conn, user_id: int, values: dict[str, str]) -> None:
    conn.execute(delete(user_attributes).where(user_attributes.c.user_id == user_id))
    _insert_many(
        conn,
        user_attributes,
        [{"user_id": user_id, "name": k, "value": v} for k, v in sorted(values.items())],
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


REWRITE_COLUMNS = tuple(diagram_rewrites.c[f] for f in RewriteRow.__dataclass_fields__)


def put_rewrite(conn, row: RewriteRow) -> None:
    delete_rewrite(conn, row.diagram_id)
    conn.execute(insert(diagram_rewrites).values(row.__dict__))


def get_rewrite(conn, diagram_id: int) -> RewriteRow | None:
    found = conn.execute(
        select(*REWRITE_COLUMNS).where(diagram_rewrites.c.diagram_id == diagram_id)
    ).first()
    return RewriteRow(*found) if found else None


def delete_rewrite(conn, diagram_id: int) -> None:
    conn.execute(delete(diagram_rewrites).where(diagram_rewrites.c.diagram_id == diagram_id))


def mark_rewrite_stale(conn, diagram_id: int, reason: str) -> None:
    conn.execute(
        update(diagram_rewrites)
        .where(diagram_rewrites.c.diagram_id == diagram_id)
        .values(stale=reason)
    )


@dataclass(frozen=True)
class PunctuationRows:
    """Security punctuations' tables: each role's label bit and the governed streams with
    their tuple identifier field (None: none) and server policy (JSON; None: none)."""

    role_bits: tuple[tuple[str, int], ...]
    governed: tuple[tuple[int, str | None, str | None], ...]


def load_punctuations(conn) -> PunctuationRows:
    return PunctuationRows(
        _tuples(conn, select(role_bits.c.role, role_bits.c.bit).order_by(role_bits.c.bit)),
        _tuples(
            conn,
            select(
                governed_streams.c.stream_id,
                governed_streams.c.tid_field,
                governed_streams.c.server_policy,
            ).order_by(governed_streams.c.stream_id),
        ),
    )


def set_governed(
    conn, stream_id: int, governed: bool, tid_field: str | None, by: str, at: float
) -> None:
    """Govern a stream (keeping its server policy if it was governed) or stop (dropping it)."""
    if not governed:
        conn.execute(delete(governed_streams).where(governed_streams.c.stream_id == stream_id))
        return
    changed = conn.execute(
        update(governed_streams)
        .where(governed_streams.c.stream_id == stream_id)
        .values(tid_field=tid_field, changed_by=by, changed_at=at)
    )
    if changed.rowcount == 0:
        conn.execute(
            insert(governed_streams).values(
                stream_id=stream_id, tid_field=tid_field, changed_by=by, changed_at=at
            )
        )


def get_role_words(conn, diagram_id: int) -> int | None:
    return conn.execute(
        select(diagram_role_words.c.words).where(diagram_role_words.c.diagram_id == diagram_id)
    ).scalar_one_or_none()


def put_role_words(conn, diagram_id: int, words: int) -> None:
    _upsert(conn, diagram_role_words, ("diagram_id",), {"diagram_id": diagram_id, "words": words})


def set_server_policy(conn, stream_id: int, policy: str | None, by: str, at: float) -> None:
    conn.execute(
        update(governed_streams)
        .where(governed_streams.c.stream_id == stream_id)
        .values(server_policy=policy, changed_by=by, changed_at=at)
    )


def insert_audit(conn, row: dict[str, Any]) -> None:
    """One audit entry (``catalog.audit``)."""
    conn.execute(INSERT_AUDIT, row)


AUDIT_COLUMNS = (
    audit.c.id,
    audit.c.at,
    audit.c.user_name,
    audit.c.roles,
    audit.c.event,
    audit.c.object,
    audit.c.allowed,
    audit.c.reason,
    audit.c.details,
)


def audit_rows(
    conn,
    equal: dict[str, Any],
    since: float | None,
    until: float | None,
    before_id: int | None,
    limit: int,
):
    """Audit rows newest first: columns ``equal`` to their values, at or after ``since`` and
    before ``until``, ids before ``before_id`` (the Nones left out)."""
    clauses = [audit.c[name] == value for name, value in equal.items() if value is not None]
    if since is not None:
        clauses.append(audit.c.at >= since)
    if until is not None:
        clauses.append(audit.c.at < until)
    if before_id is not None:
        clauses.append(audit.c.id < before_id)
    return conn.execute(
        select(*AUDIT_COLUMNS).where(*clauses).order_by(audit.c.id.desc()).limit(limit)
    )


def lease(conn, name: str) -> tuple[float, tuple | None]:
    """The database's clock, and the lease's (holder, address, expires_at) if it has one."""
    now = conn.execute(select(db_now())).scalar_one()
    row = conn.execute(
        select(leases.c.holder, leases.c.address, leases.c.expires_at).where(leases.c.name == name)
    ).first()
    return now, None if row is None else tuple(row)


def put_lease(conn, name: str, holder: str, address: str, expires_at: float) -> None:
    _upsert(
        conn,
        leases,
        ("name",),
        {"name": name, "holder": holder, "address": address, "expires_at": expires_at},
    )


def delete_lease(conn, name: str, holder: str) -> None:
    conn.execute(delete(leases).where(leases.c.name == name, leases.c.holder == holder))


def take_touched(conn) -> set[tuple[str, int | None]]:
    """The change log's notes (``catalog.changelog``), forgotten as they are read."""
    return {tuple(row) for row in conn.execute(TAKE_TOUCHED)}


# The stores' own statements: SQLite's pragmas, PostgreSQL's locks, notices and settings, and
# the marker of the migrations of before Alembic (``catalog.migrations``).

_LEGACY = Table("schema_version", MetaData(), Column("version", BigInteger, nullable=False))
_PG_DATABASE = table("pg_database", column("datcollate"), column("datname"))


def data_version(dbapi_conn: Any) -> int:
    """SQLite's count of commits to the file (anyone's), as this connection last saw it.

    Asked of the driver's own connection: it is polled at every snapshot access, where
    SQLAlchemy's work per statement would cost ten times the question."""
    return dbapi_conn.execute("PRAGMA data_version").fetchone()[0]


def legacy_version(conn) -> int | None:
    """The number of the last hand-written migration applied (None: none was)."""
    if conn.dialect.name == "sqlite":
        return conn.exec_driver_sql("PRAGMA user_version").scalar_one() or None
    if not inspect(conn).has_table(_LEGACY.name):
        return None
    return conn.execute(select(_LEGACY.c.version)).scalar_one_or_none()


def forget_legacy_version(conn) -> None:
    """Drop the old marker: a release of before Alembic then refuses the catalog (its first
    migration finds the tables there) rather than run on a schema it does not know."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("PRAGMA user_version = 0")
    else:
        _LEGACY.drop(conn)


def collation(conn) -> str:
    """How PostgreSQL's catalog database sorts text."""
    return conn.execute(
        select(_PG_DATABASE.c.datcollate).where(_PG_DATABASE.c.datname == func.current_database())
    ).scalar_one()


def function_note(conn, name: str) -> str | None:
    """The comment on PostgreSQL's function ``name`` (None: none, or no such function)."""
    return conn.execute(select(func.obj_description(func.to_regproc(name), "pg_proc"))).scalar_one()


def lock_catalog(conn, key: int) -> None:
    """PostgreSQL's catalog write lock, held until the transaction ends."""
    conn.execute(select(func.pg_advisory_xact_lock(key)))


def notify(conn, channel: str, payload: str) -> None:
    """A PostgreSQL notice on ``channel``, delivered at commit (not at all after a rollback)."""
    conn.execute(select(func.pg_notify(channel, payload)))
