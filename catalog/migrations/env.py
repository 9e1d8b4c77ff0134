"""Alembic's entry: the catalog's migrations run on the connection ``catalog.store`` hands over
(inside its write transaction), never on one Alembic opens itself."""

from alembic import context

from catalog.schema import metadata

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters a table by copying it
)
with context.begin_transaction():
    context.run_migrations()
