"""The Chinese-Wall tables (``catalog.levels``, ``catalog.clearance``): conflict-of-interest
classes, their companies and bits, stream levels, user organisations and role clearances."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, insert, literal, select

from catalog.repository._common import _bump, _insert_many, _tuples
from catalog.schema import (
    coi_classes,
    companies,
    role_clearances,
    stream_levels,
    user_organisations,
)


@dataclass(frozen=True)
class LevelRows:
    """The Chinese-Wall tables (``catalog.clearance``): classes in creation order with their
    companies and bits, stream companies, user organisations and role clearances."""

    classes: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]
    streams: tuple[tuple[int, str | None], ...]
    organisations: tuple[tuple[int, str], ...]
    clearances: tuple[tuple[str, str, str], ...]


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
