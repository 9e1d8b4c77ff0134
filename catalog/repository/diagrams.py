"""A diagram's saved versions (``catalog.versions``) and the rewrite a running diagram was
deployed with (``catalog.rewrites``)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Text, bindparam, delete, func, insert, select, update

from catalog.model import CatalogObject
from catalog.schema import FLOAT, diagram_rewrites
from catalog.schema import diagram_versions as versions


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


# Built once (binds named unlike the columns, which an INSERT reserves): every create, replace
# and drop of a diagram runs them, and their building cost more than their running.
OF_DIAGRAM = versions.c.diagram == bindparam("of_diagram", type_=Text)
INSERT_VERSION = insert(versions).from_select(
    [c.name for c in VERSION_COLUMNS],
    select(
        bindparam("of_diagram", type_=Text),
        func.coalesce(func.max(versions.c.version), 0) + 1,
        bindparam("document", type_=Text),
        bindparam("by_user", type_=Text),
        bindparam("by_role", type_=Text),
        bindparam("at", type_=FLOAT),
    ).where(OF_DIAGRAM),
)
TRIM_VERSIONS = delete(versions).where(
    OF_DIAGRAM,
    versions.c.version
    <= select(func.max(versions.c.version)).where(OF_DIAGRAM).scalar_subquery() - bindparam("keep"),
)
DELETE_VERSIONS = delete(versions).where(OF_DIAGRAM)


def insert_diagram_version(conn, diagram: CatalogObject, keep: int) -> None:
    """The diagram's document as its next version; only the newest ``keep`` stay."""
    conn.execute(
        INSERT_VERSION,
        {
            "of_diagram": diagram.name,
            "document": diagram.spec,
            "by_user": diagram.owner_user,
            "by_role": diagram.owner_role,
            "at": diagram.created_at,
        },
    )
    conn.execute(TRIM_VERSIONS, {"of_diagram": diagram.name, "keep": keep})


def delete_diagram_versions(conn, diagram: str) -> None:
    conn.execute(DELETE_VERSIONS, {"of_diagram": diagram})


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
