"""Which catalog rows a transaction touched, so the new snapshot re-reads only those.

Temporary triggers (they live with the connection, not in the file, so no migration) note the
object id behind every inserted, updated or deleted row of ``objects``, ``object_refs`` and
``permissions``, and that the subject tables changed at all. Foreign-key cascades fire them too,
so dropping a diagram notes its boxes and their grants without any caller having to know. The
notes are rows of a temporary table inside the same transaction: a rollback forgets them with
the change. Other connections (another process) have no triggers; their commits are caught by
the catalog version and reloaded whole.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

# table -> the column naming the object a row belongs to (None: a subject table).
TRACKED = {
    "objects": "id",
    "object_refs": "from_id",
    "permissions": "object_id",
    "users": None,
    "roles": None,
    "user_roles": None,
    "sessions": None,
    "session_roles": None,
}
# Tables of the Chinese-Wall levels (``catalog.clearance``): any change reloads them whole.
LEVEL_TABLES = (
    "coi_classes",
    "companies",
    "stream_levels",
    "user_organisations",
    "role_clearances",
)
# Tables of the access-control policies and user attributes (``catalog.policies``): likewise.
POLICY_TABLES = ("access_policies", "user_attributes")
# Tables of security punctuations (``catalog.punctuations``): likewise.
PUNCTUATION_TABLES = ("role_bits", "governed_streams")


@dataclass(frozen=True)
class Touched:
    objects: frozenset[int]
    subjects: bool
    levels: bool = False
    policies: bool = False
    punctuations: bool = False


def _trigger(table: str, column: str | None, event: str, what: str = "subjects") -> str:
    rows = {"INSERT": ("NEW",), "DELETE": ("OLD",), "UPDATE": ("OLD", "NEW")}[event]
    values = ", ".join(
        f"('object', {row}.{column})" if column else f"('{what}', NULL)" for row in rows
    )
    return (
        f"CREATE TEMP TRIGGER IF NOT EXISTS touched_{table}_{event.lower()}"
        f" AFTER {event} ON main.{table}"
        f" BEGIN INSERT INTO touched (what, id) VALUES {values}; END;"
    )


def install(conn: sqlite3.Connection) -> None:
    """Create the note table and the triggers on this connection (idempotent)."""
    ddl = ["CREATE TEMP TABLE IF NOT EXISTS touched (what TEXT NOT NULL, id INTEGER);"]
    ddl += [
        _trigger(table, column, event)
        for table, column in TRACKED.items()
        for event in ("INSERT", "UPDATE", "DELETE")
    ]
    ddl += [
        _trigger(table, None, event, "levels")
        for table in LEVEL_TABLES
        for event in ("INSERT", "UPDATE", "DELETE")
    ]
    ddl += [
        _trigger(table, None, event, what)
        for tables, what in ((POLICY_TABLES, "policies"), (PUNCTUATION_TABLES, "punctuations"))
        for table in tables
        for event in ("INSERT", "UPDATE", "DELETE")
    ]
    conn.executescript("\n".join(ddl))


def take(conn: sqlite3.Connection) -> Touched:
    """What was touched since the last ``take``, forgetting it (inside the caller's transaction)."""
    rows = conn.execute("SELECT DISTINCT what, id FROM touched").fetchall()
    if rows:
        conn.execute("DELETE FROM touched")
    return Touched(
        frozenset(i for what, i in rows if what == "object"),
        any(what == "subjects" for what, _ in rows),
        any(what == "levels" for what, _ in rows),
        any(what == "policies" for what, _ in rows),
        any(what == "punctuations" for what, _ in rows),
    )
