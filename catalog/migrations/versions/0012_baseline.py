"""The baseline: the catalog's schema as the hand-written migrations 0001-0012 left it.

Revision ``0012``, named after the last of those migrations: a catalog they made is stamped
with it when it first opens under Alembic (``catalog.store``), and a new one is made by it.
A frozen record of that schema, not ``catalog.schema`` (which follows the latest revision).
Types as the old migrations gave each database: on PostgreSQL ``BIGINT`` and ``DOUBLE
PRECISION`` and identity columns, on SQLite ``INTEGER`` (``AUTOINCREMENT`` where ids are never
reused) and ``REAL``. Why each table exists: docs/architecture.md, "The catalog".
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = None

INT = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
FLOAT: sa.types.TypeEngine[float] = sa.REAL().with_variant(sa.DOUBLE_PRECISION(), "postgresql")
COUNTERS = ("source_index", "catalog_version", "company_bit", "role_bit")


def upgrade() -> None:
    op.create_table(
        "access_policies",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("role", sa.Text(), nullable=False),
        sa.Column("item", sa.Text(), nullable=False),
        sa.Column("changed_by", sa.Text(), nullable=False),
        sa.Column("changed_at", FLOAT, nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "audit",
        sa.Column("id", INT, sa.Identity(always=False), nullable=False),
        sa.Column("at", FLOAT, nullable=False),
        sa.Column("user_name", sa.Text(), nullable=True),
        sa.Column("roles", sa.Text(), nullable=True),
        sa.Column("event", sa.Text(), nullable=False),
        sa.Column("object", sa.Text(), nullable=True),
        sa.Column("allowed", INT, nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("details", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("audit_at", "audit", ["at"], unique=False)
    op.create_index("audit_user", "audit", ["user_name", "at"], unique=False)
    op.create_table(
        "coi_classes",
        sa.Column("id", INT, sa.Identity(always=False), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("created_at", FLOAT, nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "counters",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("value", INT, nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "diagram_versions",
        sa.Column("diagram", sa.Text(), nullable=False),
        sa.Column("version", INT, nullable=False),
        sa.Column("spec", sa.Text(), nullable=True),
        sa.Column("saved_by", sa.Text(), nullable=False),
        sa.Column("saved_role", sa.Text(), nullable=False),
        sa.Column("saved_at", FLOAT, nullable=False),
        sa.PrimaryKeyConstraint("diagram", "version"),
    )
    op.create_table(
        "leases",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("holder", sa.Text(), nullable=False),
        sa.Column("address", sa.Text(), nullable=False),
        sa.Column("expires_at", FLOAT, nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "roles",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("created_at", FLOAT, nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "system_settings",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("changed_by", sa.Text(), nullable=False),
        sa.Column("changed_at", FLOAT, nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "users",
        sa.Column("id", INT, sa.Identity(always=False), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("password_hash", sa.Text(), nullable=False),
        sa.Column("enabled", INT, server_default=sa.text("1"), nullable=False),
        sa.Column("created_at", FLOAT, nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "companies",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("coi", sa.Text(), nullable=False),
        sa.Column("bit", INT, nullable=False),
        sa.Column("created_at", FLOAT, nullable=False),
        sa.CheckConstraint("bit BETWEEN 0 AND 63"),
        sa.ForeignKeyConstraint(["coi"], ["coi_classes.name"], ondelete="RESTRICT"),
        sa.PrimaryKeyConstraint("name"),
        sa.UniqueConstraint("bit"),
    )
    op.create_table(
        "objects",
        sa.Column("id", INT, sa.Identity(always=False), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=True),
        sa.Column("parent_id", INT, nullable=True),
        sa.Column("owner_user", sa.Text(), nullable=False),
        sa.Column("owner_role", sa.Text(), nullable=False),
        sa.Column("source_index", INT, nullable=True),
        sa.Column("spec", sa.Text(), nullable=True),
        sa.Column("status", sa.Text(), nullable=True),
        sa.Column("created_at", FLOAT, nullable=False),
        sa.Column("public_name", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["owner_role"],
            ["roles.name"],
        ),
        sa.ForeignKeyConstraint(["parent_id"], ["objects.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("source_index"),
        sa.UniqueConstraint("type", "name"),
        sqlite_autoincrement=True,
    )
    op.create_index("objects_parent", "objects", ["parent_id"], unique=False)
    op.create_index(
        "one_system",
        "objects",
        ["type"],
        unique=True,
        sqlite_where=sa.text("type = 'system'"),
        postgresql_where=sa.text("type = 'system'"),
    )
    op.create_table(
        "role_bits",
        sa.Column("role", sa.Text(), nullable=False),
        sa.Column("bit", INT, nullable=False),
        sa.CheckConstraint("bit BETWEEN 0 AND 4095"),
        sa.ForeignKeyConstraint(["role"], ["roles.name"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("role"),
        sa.UniqueConstraint("bit"),
    )
    op.create_table(
        "role_clearances",
        sa.Column("role", sa.Text(), nullable=False),
        sa.Column("coi", sa.Text(), nullable=False),
        sa.Column("entry", sa.Text(), nullable=False),
        sa.Column("changed_by", sa.Text(), nullable=False),
        sa.Column("changed_at", FLOAT, nullable=False),
        sa.ForeignKeyConstraint(["coi"], ["coi_classes.name"], ondelete="RESTRICT"),
        sa.ForeignKeyConstraint(["role"], ["roles.name"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("role", "coi"),
    )
    op.create_table(
        "role_limits",
        sa.Column("role", sa.Text(), nullable=False),
        sa.Column("parameter", sa.Text(), nullable=False),
        sa.Column("value", FLOAT, nullable=False),
        sa.Column("changed_by", sa.Text(), nullable=False),
        sa.Column("changed_at", FLOAT, nullable=False),
        sa.ForeignKeyConstraint(["role"], ["roles.name"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("role", "parameter"),
    )
    op.create_table(
        "sessions",
        sa.Column("id", INT, sa.Identity(always=False), nullable=False),
        sa.Column("token_hash", sa.Text(), nullable=False),
        sa.Column("user_id", INT, nullable=False),
        sa.Column("created_at", FLOAT, nullable=False),
        sa.Column("expires_at", FLOAT, nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash"),
        sqlite_autoincrement=True,
    )
    op.create_index("sessions_user", "sessions", ["user_id"], unique=False)
    op.create_table(
        "user_attributes",
        sa.Column("user_id", INT, nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id", "name"),
    )
    op.create_table(
        "user_roles",
        sa.Column("user_id", INT, nullable=False),
        sa.Column("role", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["role"], ["roles.name"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id", "role"),
    )
    op.create_table(
        "diagram_rewrites",
        sa.Column("diagram_id", INT, nullable=False),
        sa.Column("deployer", sa.Text(), nullable=False),
        sa.Column("roles", sa.Text(), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.Column("added", sa.Text(), nullable=False),
        sa.Column("stale", sa.Text(), nullable=True),
        sa.Column("at", FLOAT, nullable=False),
        sa.ForeignKeyConstraint(["diagram_id"], ["objects.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("diagram_id"),
    )
    op.create_table(
        "diagram_role_words",
        sa.Column("diagram_id", INT, nullable=False),
        sa.Column("words", INT, nullable=False),
        sa.CheckConstraint("words BETWEEN 1 AND 64"),
        sa.ForeignKeyConstraint(["diagram_id"], ["objects.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("diagram_id"),
    )
    op.create_table(
        "governed_streams",
        sa.Column("stream_id", INT, nullable=False),
        sa.Column("tid_field", sa.Text(), nullable=True),
        sa.Column("changed_by", sa.Text(), nullable=False),
        sa.Column("changed_at", FLOAT, nullable=False),
        sa.Column("server_policy", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["stream_id"], ["objects.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("stream_id"),
    )
    op.create_table(
        "object_refs",
        sa.Column("from_id", INT, nullable=False),
        sa.Column("to_id", INT, nullable=False),
        sa.ForeignKeyConstraint(["from_id"], ["objects.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["to_id"], ["objects.id"], ondelete="RESTRICT"),
        sa.PrimaryKeyConstraint("from_id", "to_id"),
    )
    op.create_index("object_refs_to", "object_refs", ["to_id"], unique=False)
    op.create_table(
        "permissions",
        sa.Column("role", sa.Text(), nullable=False),
        sa.Column("action", sa.Text(), nullable=False),
        sa.Column("object_id", INT, nullable=False),
        sa.Column("granted_by", sa.Text(), nullable=False),
        sa.Column("granted_at", FLOAT, nullable=False),
        sa.ForeignKeyConstraint(["object_id"], ["objects.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["role"], ["roles.name"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("role", "action", "object_id"),
    )
    op.create_index("permissions_object", "permissions", ["object_id"], unique=False)
    op.create_table(
        "session_roles",
        sa.Column("session_id", INT, nullable=False),
        sa.Column("role", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["role"], ["roles.name"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["session_id"], ["sessions.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("session_id", "role"),
    )
    op.create_table(
        "stream_levels",
        sa.Column("stream_id", INT, nullable=False),
        sa.Column("company", sa.Text(), nullable=True),
        sa.Column("multilevel", INT, server_default=sa.text("0"), nullable=False),
        sa.CheckConstraint("(company IS NULL) = (multilevel = 1)"),
        sa.ForeignKeyConstraint(["company"], ["companies.name"], ondelete="RESTRICT"),
        sa.ForeignKeyConstraint(["stream_id"], ["objects.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("stream_id"),
    )
    op.create_table(
        "user_organisations",
        sa.Column("user_id", INT, nullable=False),
        sa.Column("company", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["company"], ["companies.name"], ondelete="RESTRICT"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id"),
    )

    counters = sa.table("counters", sa.column("name"), sa.column("value"))
    op.bulk_insert(counters, [{"name": name, "value": 0} for name in COUNTERS])


def downgrade() -> None:
    raise NotImplementedError("the baseline is not undone: start from an empty database")
