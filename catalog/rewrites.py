"""The rewrite each running diagram was deployed with: who deployed it, with which active roles,
the rewritten document and what the rewriting added (``boxes.rewrite``, docs/rewrite.md).

The server writes it at deploy and reads it to answer who may read the diagram's outputs and
whether a change of policies or attributes made it stale. It is not part of the snapshot: no
permission decision reads it. Writes are audited in their own transaction.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from catalog import repository
from catalog.core import Core
from catalog.model import CatalogObject, Subject


@dataclass(frozen=True)
class Deployed:
    deployer: str
    roles: frozenset[str]
    document: dict[str, Any]
    added: list[dict[str, Any]]
    stale: str | None  # why the diagram was stopped, once it was

    def to_dict(self, full: bool) -> dict[str, Any]:
        """What the diagram's description shows; predicates (which carry the deployer's
        attributes as literals) only when ``full``."""
        shown = (
            self.added
            if full
            else [{k: v for k, v in a.items() if k != "where"} for a in self.added]
        )  # noqa: E501
        return {"deployer": self.deployer, "added": shown, "stale": self.stale}


def _public(added: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in added.items() if k != "where"}


class Rewrites:
    def __init__(self, core: Core) -> None:
        self.core = core

    def record(
        self, subject: Subject, diagram: CatalogObject, document: dict, added: list[dict]
    ) -> None:
        """The rewrite ``subject`` deployed ``diagram`` with (its active roles)."""
        row = repository.RewriteRow(
            diagram.id,
            subject.user_name,
            json.dumps(sorted(subject.roles)),
            json.dumps(document),
            json.dumps(added),
            None,
            self.core.clock(),
        )
        with self.core.store.transaction() as conn:
            repository.put_rewrite(conn, row)
            self.core.log(
                subject, "rewrite", f"diagram:{diagram.name}", True, "deploy", conn, added=added
            )

    def swap(
        self, diagram: CatalogObject, document: dict, added: list[dict], by: Subject | None
    ) -> None:
        """The diagram runs from now on under ``document``, its recorded deployer's rewrite
        after a change of policies or attributes that ``by`` made (None: seen at a restart)."""
        with self.core.store.transaction() as conn:
            row = repository.get_rewrite(conn, diagram.id)
            assert row is not None, "only a rewritten diagram is swapped"
            now = self.core.clock()
            new = dataclasses.replace(
                row, document=json.dumps(document), added=json.dumps(added), at=now
            )
            repository.put_rewrite(conn, new)
            self.core.log(
                by, "rewrite", f"diagram:{diagram.name}", True, "policy change", conn, added=added
            )

    def forget(self, diagram: CatalogObject) -> None:
        """The diagram was deployed without rewriting (it reads no protected stream)."""
        with self.core.store.transaction() as conn:
            repository.delete_rewrite(conn, diagram.id)

    def of(self, diagram: CatalogObject) -> Deployed | None:
        with self.core.store.reader() as conn:
            row = repository.get_rewrite(conn, diagram.id)
        if row is None:
            return None
        return Deployed(
            row.deployer,
            frozenset(json.loads(row.roles)),
            json.loads(row.document),
            json.loads(row.added),
            row.stale,
        )

    def mark_stale(self, diagram: CatalogObject, reason: str, by: Subject | None) -> None:
        """Stop the diagram (whoever ``by`` is: the server acts on a policy change) and record
        why, in one transaction."""
        with self.core.change() as conn:
            repository.set_status(conn, diagram.id, "stopped")
            repository.mark_rewrite_stale(conn, diagram.id, reason)
            self.core.log(
                by,
                "rewrite_stale",
                f"diagram:{diagram.name}",
                True,
                "policy change",
                conn,
                why=reason,
            )
