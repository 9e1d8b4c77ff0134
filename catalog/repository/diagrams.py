"""A diagram's saved versions (``catalog.versions``) and the rewrite a running diagram was
deployed with (``catalog.rewrites``)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Text, delete, func, insert, literal, select, update

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
