"""The catalog's tables, declared once for SQLite and PostgreSQL (SQLAlchemy Core metadata).

Every statement (``catalog.repository``) and the Alembic baseline (``catalog/migrations``) are
built from these. The types are those the old hand-written migrations gave each database:
SQLite's ``INTEGER`` and ``REAL``; on PostgreSQL ``BIGINT`` and ``DOUBLE PRECISION`` (its
``INTEGER`` is 32-bit and ``REAL`` 4-byte: ids, bit masks and timestamps would not fit). Ids of
users, objects, sessions and classes are never reused (SQLite's ``AUTOINCREMENT``, PostgreSQL's
identity), so a stale reference cannot come back to life as someone else's.

What each table is for is told where it was made: the comments of the Alembic baseline.
"""

from __future__ import annotations

from sqlalchemy import (
    REAL,
    BigInteger,
    CheckConstraint,
    Column,
    ForeignKey,
    Identity,
    Index,
    Integer,
    MetaData,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import DOUBLE_PRECISION
from sqlalchemy.types import TypeEngine

metadata = MetaData()

INT = BigInteger().with_variant(Integer(), "sqlite")  # SQLite: INTEGER, a rowid alias as key
FLOAT: TypeEngine[float] = REAL().with_variant(DOUBLE_PRECISION(), "postgresql")


def _id() -> Column:
    return Column("id", INT, Identity(), primary_key=True)


def _ref(target: str, ondelete: str | None = "CASCADE") -> ForeignKey:
    return ForeignKey(target, ondelete=ondelete)


users = Table(
    "users",
    metadata,
    _id(),
    Column("name", Text, nullable=False, unique=True),
    Column("password_hash", Text, nullable=False),
    Column("enabled", INT, nullable=False, server_default=text("1")),
    Column("created_at", FLOAT, nullable=False),
    sqlite_autoincrement=True,  # ids never reused
)

roles = Table(
    "roles",
    metadata,
    Column("name", Text, primary_key=True),
    Column("created_at", FLOAT, nullable=False),
)

user_roles = Table(
    "user_roles",
    metadata,
    Column("user_id", INT, _ref("users.id"), primary_key=True),
    Column("role", Text, _ref("roles.name"), primary_key=True),
)

objects = Table(
    "objects",
    metadata,
    _id(),
    Column("type", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("kind", Text),
    Column("parent_id", INT, _ref("objects.id")),
    Column("owner_user", Text, nullable=False),
    Column("owner_role", Text, ForeignKey("roles.name"), nullable=False),
    Column("source_index", INT, unique=True),
    Column("spec", Text),
    Column("status", Text),
    Column("created_at", FLOAT, nullable=False),
    Column("public_name", Text),
    UniqueConstraint("type", "name"),
    sqlite_autoincrement=True,  # ids never reused
)
_system = objects.c.type == text("'system'")
Index("one_system", objects.c.type, unique=True, sqlite_where=_system, postgresql_where=_system)
Index("objects_parent", objects.c.parent_id)

object_refs = Table(
    "object_refs",
    metadata,
    Column("from_id", INT, _ref("objects.id"), primary_key=True),
    Column("to_id", INT, _ref("objects.id", "RESTRICT"), primary_key=True),
)
Index("object_refs_to", object_refs.c.to_id)

permissions = Table(
    "permissions",
    metadata,
    Column("role", Text, _ref("roles.name"), primary_key=True),
    Column("action", Text, primary_key=True),
    Column("object_id", INT, _ref("objects.id"), primary_key=True),
    Column("granted_by", Text, nullable=False),
    Column("granted_at", FLOAT, nullable=False),
)
Index("permissions_object", permissions.c.object_id)

sessions = Table(
    "sessions",
    metadata,
    _id(),
    Column("token_hash", Text, nullable=False, unique=True),
    Column("user_id", INT, _ref("users.id"), nullable=False),
    Column("created_at", FLOAT, nullable=False),
    Column("expires_at", FLOAT, nullable=False),
    sqlite_autoincrement=True,  # ids never reused
)
Index("sessions_user", sessions.c.user_id)

session_roles = Table(
    "session_roles",
    metadata,
    Column("session_id", INT, _ref("sessions.id"), primary_key=True),
    Column("role", Text, _ref("roles.name"), primary_key=True),
)

counters = Table(
    "counters",
    metadata,
    Column("name", Text, primary_key=True),
    Column("value", INT, nullable=False),
)
COUNTERS = ("source_index", "catalog_version", "company_bit", "role_bit")  # each from 0

audit = Table(
    "audit",
    metadata,
    _id(),
    Column("at", FLOAT, nullable=False),
    Column("user_name", Text),
    Column("roles", Text),
    Column("event", Text, nullable=False),
    Column("object", Text),
    Column("allowed", INT, nullable=False),
    Column("reason", Text, nullable=False),
    Column("details", Text),
)
Index("audit_at", audit.c.at)
Index("audit_user", audit.c.user_name, audit.c.at)

system_settings = Table(
    "system_settings",
    metadata,
    Column("name", Text, primary_key=True),
    Column("value", Text, nullable=False),
    Column("changed_by", Text, nullable=False),
    Column("changed_at", FLOAT, nullable=False),
)

role_limits = Table(
    "role_limits",
    metadata,
    Column("role", Text, _ref("roles.name"), primary_key=True),
    Column("parameter", Text, primary_key=True),
    Column("value", FLOAT, nullable=False),
    Column("changed_by", Text, nullable=False),
    Column("changed_at", FLOAT, nullable=False),
)

coi_classes = Table(
    "coi_classes",
    metadata,
    _id(),
    Column("name", Text, nullable=False, unique=True),
    Column("created_at", FLOAT, nullable=False),
    sqlite_autoincrement=True,  # ids never reused
)

companies = Table(
    "companies",
    metadata,
    Column("name", Text, primary_key=True),
    Column("coi", Text, _ref("coi_classes.name", "RESTRICT"), nullable=False),
    Column("bit", INT, nullable=False, unique=True),
    Column("created_at", FLOAT, nullable=False),
    CheckConstraint("bit BETWEEN 0 AND 63"),
)

stream_levels = Table(
    "stream_levels",
    metadata,
    Column("stream_id", INT, _ref("objects.id"), primary_key=True),
    Column("company", Text, _ref("companies.name", "RESTRICT")),
    Column("multilevel", INT, nullable=False, server_default=text("0")),
    CheckConstraint("(company IS NULL) = (multilevel = 1)"),
)

user_organisations = Table(
    "user_organisations",
    metadata,
    Column("user_id", INT, _ref("users.id"), primary_key=True),
    Column("company", Text, _ref("companies.name", "RESTRICT"), nullable=False),
)

role_clearances = Table(
    "role_clearances",
    metadata,
    Column("role", Text, _ref("roles.name"), primary_key=True),
    Column("coi", Text, _ref("coi_classes.name", "RESTRICT"), primary_key=True),
    Column("entry", Text, nullable=False),
    Column("changed_by", Text, nullable=False),
    Column("changed_at", FLOAT, nullable=False),
)

diagram_versions = Table(
    "diagram_versions",
    metadata,
    Column("diagram", Text, primary_key=True),
    Column("version", INT, primary_key=True),
    Column("spec", Text),
    Column("saved_by", Text, nullable=False),
    Column("saved_role", Text, nullable=False),
    Column("saved_at", FLOAT, nullable=False),
)

access_policies = Table(
    "access_policies",
    metadata,
    Column("name", Text, primary_key=True),
    Column("role", Text, nullable=False),
    Column("item", Text, nullable=False),
    Column("changed_by", Text, nullable=False),
    Column("changed_at", FLOAT, nullable=False),
)

user_attributes = Table(
    "user_attributes",
    metadata,
    Column("user_id", INT, _ref("users.id"), primary_key=True),
    Column("name", Text, primary_key=True),
    Column("value", Text, nullable=False),
)

diagram_rewrites = Table(
    "diagram_rewrites",
    metadata,
    Column("diagram_id", INT, _ref("objects.id"), primary_key=True),
    Column("deployer", Text, nullable=False),
    Column("roles", Text, nullable=False),
    Column("document", Text, nullable=False),
    Column("added", Text, nullable=False),
    Column("stale", Text),
    Column("at", FLOAT, nullable=False),
)

role_bits = Table(
    "role_bits",
    metadata,
    Column("role", Text, _ref("roles.name"), primary_key=True),
    Column("bit", INT, nullable=False, unique=True),
    CheckConstraint("bit BETWEEN 0 AND 4095"),
)

governed_streams = Table(
    "governed_streams",
    metadata,
    Column("stream_id", INT, _ref("objects.id"), primary_key=True),
    Column("tid_field", Text),
    Column("changed_by", Text, nullable=False),
    Column("changed_at", FLOAT, nullable=False),
    Column("server_policy", Text),
)

leases = Table(
    "leases",
    metadata,
    Column("name", Text, primary_key=True),
    Column("holder", Text, nullable=False),
    Column("address", Text, nullable=False),
    Column("expires_at", FLOAT, nullable=False),
)

diagram_role_words = Table(
    "diagram_role_words",
    metadata,
    Column("diagram_id", INT, _ref("objects.id"), primary_key=True),
    Column("words", INT, nullable=False),
    CheckConstraint("words BETWEEN 1 AND 64"),
)

dashboards = Table(
    "dashboards",
    metadata,
    Column("user_id", INT, _ref("users.id"), primary_key=True),
    Column("name", Text, primary_key=True),
    Column("panels", Text, nullable=False),
    Column("changed_at", FLOAT, nullable=False),
)

# The change log's notes (``catalog.changelog``): a temporary table of the writing connection,
# made with it, never by a migration.
touched = Table("touched", MetaData(), Column("what", Text, nullable=False), Column("id", INT))
