"""What may be acted on: the owned objects (a diagram's boxes, streams and outputs inside it),
the references between them, and the explicit grants on them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Text,
    bindparam,
    cast,
    column,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)

from catalog.model import Action, CatalogObject, Grant, ObjectType
from catalog.repository._common import _bump, _insert_new
from catalog.schema import FLOAT, INT, object_refs, objects, permissions


@dataclass(frozen=True)
class ObjectRows:
    """What may be acted on: the owned objects and the explicit grants on them."""

    objects: tuple[CatalogObject, ...]
    grants: tuple[Grant, ...]


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


# Built once, as ``_common.BUMP`` is: every new object runs it.
INSERT_OBJECT = insert(objects).returning(objects.c.id)


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


MEMBERS = bindparam("members", type_=Text)  # a JSON array of [type, key, public name, kind]


@cache
def _insert_members(dialect: str) -> Any:
    """One INSERT of every member ``MEMBERS`` lists, read by the database's own JSON function
    (as ``_id_rows`` reads ids): its rows cost SQLite's time, not SQLAlchemy's per row."""
    if dialect == "sqlite":
        rows = func.json_each(MEMBERS).table_valued(column("value", JSON))
    else:
        rows = func.json_array_elements(cast(MEMBERS, JSON)).table_valued(column("value", JSON))
    return insert(objects).from_select(
        ["type", "name", "public_name", "kind", "parent_id", "owner_user", "owner_role"]
        + ["created_at"],
        select(
            *(rows.c.value[i].as_string() for i in range(4)),
            bindparam("parent", type_=INT),
            bindparam("by_user", type_=Text),
            bindparam("by_role", type_=Text),
            bindparam("at", type_=FLOAT),
        ),
    )


def insert_members(
    conn,
    diagram: CatalogObject,
    members: Iterable[tuple[ObjectType, str, str | None, str | None]],
) -> None:
    """A diagram's boxes, streams and outputs (type, key, public name, kind), owned like the
    diagram and created with it, in one statement: a large diagram is one round trip, not
    hundreds."""
    rows = [[type_.value, name, public_name, kind] for type_, name, public_name, kind in members]
    if rows:
        conn.execute(
            _insert_members(conn.dialect.name),
            {
                "members": json.dumps(rows),
                "parent": diagram.id,
                "by_user": diagram.owner_user,
                "by_role": diagram.owner_role,
                "at": diagram.created_at,
            },
        )


def insert_refs(conn, from_id: int, to_ids: Iterable[int]) -> None:
    rows = [{"from_id": from_id, "to_id": to_id} for to_id in to_ids]
    if rows:
        conn.execute(_insert_new(conn.dialect.name, object_refs), rows)


# Built once, as ``INSERT_OBJECT`` is: a create, deploy or drop runs them.
OBJECT_ID = bindparam("object_id", type_=INT)
DELETE_OBJECT = delete(objects).where(objects.c.id == OBJECT_ID)
SET_STATUS = update(objects).where(objects.c.id == OBJECT_ID)  # SET from the "status" given


def delete_object(conn, object_id: int) -> None:
    conn.execute(DELETE_OBJECT, {"object_id": object_id})


def set_status(conn, object_id: int, status: str) -> None:
    conn.execute(SET_STATUS, {"object_id": object_id, "status": status})


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
            _insert_new(conn.dialect.name, permissions),
            {
                "role": grant.role,
                "action": grant.action.value,
                "object_id": grant.object_id,
                "granted_by": grant.granted_by,
                "granted_at": at,
            },
            execution_options={"preserve_rowcount": True},  # an INSERT's is kept only if asked
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
