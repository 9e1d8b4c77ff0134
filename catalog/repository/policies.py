"""Access-control policies and the users' attributes they read, and the security
punctuations' tables: role bits, governed streams, server policies and each diagram's role
words."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, insert, select, update

from catalog.repository._common import _insert_many, _tuples, _upsert
from catalog.schema import (
    access_policies,
    diagram_role_words,
    governed_streams,
    role_bits,
    user_attributes,
)


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
