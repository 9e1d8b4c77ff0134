"""The catalog's migrations: an Alembic history (``versions/``) both databases run, from a
baseline equal to the schema the hand-written migrations 0001-0012 made.

A catalog those made (a Sluice data directory of before Alembic) is recognised by their
marker, SQLite's ``user_version`` or PostgreSQL's ``schema_version`` table, at 12: it is
stamped with the baseline and then upgraded like any other. One the old runner left earlier
is refused (``CATALOG_TOO_OLD``): the steps that led to 12 are no longer shipped.
"""

from __future__ import annotations

from functools import cache

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection

from boxes import codes
from boxes.errors import InvalidInput
from catalog import repository

LOCATION = "catalog:migrations"  # Alembic's name for this folder
BASELINE = "0012"  # the revision of the schema the old migrations' last step made
LEGACY_LAST = 12


def _config(conn: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", LOCATION)
    config.attributes["connection"] = conn
    return config


def head() -> str | None:
    """The newest revision this release ships."""
    return _head(LOCATION)


@cache
def _head(location: str) -> str | None:
    return ScriptDirectory.from_config(_config()).get_current_head()


def revision(conn: Connection) -> str | None:
    """The revision the catalog is at (None: none, a blank or a pre-Alembic database)."""
    return MigrationContext.configure(conn).get_current_revision()


def upgrade(conn: Connection) -> None:
    """Bring the catalog to the newest revision, inside the caller's write transaction (so of
    several servers starting at once one migrates and the others find it done)."""
    current = revision(conn)
    if current == head():
        return
    if current is None:
        legacy = repository.legacy_version(conn)
        if legacy is not None:
            if legacy != LEGACY_LAST:
                raise InvalidInput(code=codes.CATALOG_TOO_OLD, version=legacy)
            command.stamp(_config(conn), BASELINE)
            repository.forget_legacy_version(conn)
    command.upgrade(_config(conn), "head")
