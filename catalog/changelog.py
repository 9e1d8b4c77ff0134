"""Which catalog rows a transaction touched, so the new snapshot re-reads only those.

Temporary triggers (they live with the connection, not in the file, so no migration) note the
object id behind every inserted, updated or deleted row of ``objects``, ``object_refs`` and
``permissions``, and that the subject tables changed at all. Foreign-key cascades fire them too,
so dropping a diagram notes its boxes and their grants without any caller having to know. The
notes are rows of a temporary table inside the same transaction: a rollback forgets them with
the change. Other connections (another process) have no triggers; their commits are caught by
the catalog version and reloaded whole.

PostgreSQL has no temporary triggers: there the triggers are the database's own, made (again)
when a store opens, from the same tables below, and they note a row only in a connection that
made the temporary table ``touched`` (a catalog's writer; not another server, not psql).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from catalog import migrations, repository

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


def _trigger(table: str, column: str | None, event: str, what: str) -> str:
    rows = {"INSERT": ("NEW",), "DELETE": ("OLD",), "UPDATE": ("OLD", "NEW")}[event]
    values = ", ".join(
        f"('object', {row}.{column})" if column else f"('{what}', NULL)" for row in rows
    )
    return (
        f"CREATE TEMP TRIGGER IF NOT EXISTS touched_{table}_{event.lower()}"
        f" AFTER {event} ON main.{table}"
        f" BEGIN INSERT INTO touched (what, id) VALUES {values}; END;"
    )


def _tracked() -> list[tuple[str, str | None, str]]:
    """(table, column naming the object or None, what a change of a row notes)."""
    return [
        *((table, column, "object" if column else "subjects") for table, column in TRACKED.items()),
        *((table, None, "levels") for table in LEVEL_TABLES),
        *((table, None, "policies") for table in POLICY_TABLES),
        *((table, None, "punctuations") for table in PUNCTUATION_TABLES),
    ]


TOUCHED = "CREATE TEMP TABLE IF NOT EXISTS touched (what TEXT NOT NULL, id BIGINT)"

# Notes a row change in this connection's ``touched``, if it has one (TG_ARGV: what, column).
PG_FUNCTION = """
CREATE OR REPLACE FUNCTION sluice_note_touched() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF to_regclass('pg_temp.touched') IS NULL THEN
        RETURN NULL;
    ELSIF TG_ARGV[0] <> 'object' THEN
        INSERT INTO pg_temp.touched (what, id) VALUES (TG_ARGV[0], NULL);
        RETURN NULL;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        INSERT INTO pg_temp.touched (what, id)
        VALUES ('object', (to_jsonb(OLD) ->> TG_ARGV[1])::bigint);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        INSERT INTO pg_temp.touched (what, id)
        VALUES ('object', (to_jsonb(NEW) ->> TG_ARGV[1])::bigint);
    END IF;
    RETURN NULL;
END $$;
"""


def install(store) -> None:
    """Create the note table and the triggers for the store's writing connection (idempotent)."""
    if store.dialect.name == "postgresql":
        _install_postgresql(store)
        return
    ddl = [TOUCHED]
    ddl += [
        _trigger(table, column, event, what)
        for table, column, what in _tracked()
        for event in ("INSERT", "UPDATE", "DELETE")
    ]
    with store.transaction() as conn:
        for statement in ddl:
            conn.exec_driver_sql(statement)


def _install_postgresql(store) -> None:
    """The function and triggers are made under the write lock, again whenever they or the
    schema differ from what the function's comment records: a server that starts while
    another runs brings them up to its own list of tables, and otherwise locks no table."""
    ddl = [PG_FUNCTION]
    for table, column, what in _tracked():
        args = f"'{what}', '{column}'" if column else f"'{what}'"
        ddl += [
            f"DROP TRIGGER IF EXISTS sluice_touched ON {table};",
            f"CREATE TRIGGER sluice_touched AFTER INSERT OR UPDATE OR DELETE ON {table}"
            f" FOR EACH ROW EXECUTE FUNCTION sluice_note_touched({args});",
        ]
    with store.transaction() as conn:
        made = (
            f"{migrations.revision(conn)} {hashlib.sha256(''.join(ddl).encode()).hexdigest()[:16]}"
        )
        if repository.function_note(conn, "sluice_note_touched") != made:
            for statement in [*ddl, f"COMMENT ON FUNCTION sluice_note_touched() IS '{made}'"]:
                conn.exec_driver_sql(statement)
        conn.exec_driver_sql(TOUCHED)


def take(conn) -> Touched:
    """What was touched since the last ``take``, forgetting it (inside the caller's transaction)."""
    rows = repository.take_touched(conn)
    return Touched(
        frozenset(i for what, i in rows if what == "object" and i is not None),
        any(what == "subjects" for what, _ in rows),
        any(what == "levels" for what, _ in rows),
        any(what == "policies" for what, _ in rows),
        any(what == "punctuations" for what, _ in rows),
    )
