"""The store on both databases: migrations, persistence across restarts, URLs, statements."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy import ARRAY, Text, cast, literal, select
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.exc import DBAPIError

from boxes.errors import InvalidInput
from catalog import Catalog, ObjectType, migrations, repository
from catalog.bootstrap import add_admin
from catalog.store import open_store
from tests.catalog.conftest import BOX_TYPES, PASSWORD, sql


def test_a_new_database_is_migrated_to_the_latest_version(new_db):
    store = open_store(new_db(blank=True))
    try:
        assert store.revision() == migrations.head()
        store.migrate()
        assert store.revision() == migrations.head()
    finally:
        store.close()


def test_everything_survives_a_restart(cat, admin, people, db_url, clock):
    people({"al": ["CUSTOMER1"]})
    cat.objects.add_schema(admin, "s", {"fields": {"x": "long"}})
    cat.objects.add_stream(admin, "in1", "s")
    token, al = cat.sessions.login("al", PASSWORD)
    cat.close()
    again = Catalog.open(db_url, bcrypt_rounds=4, clock=clock)
    try:
        assert again.sessions.resolve(token) == al
        joe = again.sessions.login("joe", PASSWORD)[1]
        assert [o.name for o in again.objects.lookup(joe)] == ["system", "s", "in1", *BOX_TYPES]
        assert again.objects.get(joe, ObjectType.STREAM, "in1").source_index == 0
    finally:
        again.close()


BROKEN = """
import sqlalchemy as sa
from alembic import op

revision = "9999"
down_revision = "{head}"


def upgrade() -> None:
    op.create_table("extra", sa.Column("x", sa.Integer))
    op.execute("SELECT * FROM nowhere")
"""


def test_a_failed_migration_leaves_the_database_as_it_was(db_url, monkeypatch, tmp_path):
    open_store(db_url).close()
    shipped = Path(migrations.__file__).parent
    scripts = tmp_path / "migrations"
    shutil.copytree(shipped, scripts)
    (scripts / "versions" / "9999_broken.py").write_text(BROKEN.format(head=migrations.head()))
    monkeypatch.setattr(migrations, "LOCATION", str(scripts))
    with pytest.raises(DBAPIError):
        open_store(db_url)
    monkeypatch.undo()
    store = open_store(db_url)
    try:
        assert store.revision() == migrations.head()
        with pytest.raises(DBAPIError), store.reader() as conn:
            sql(conn, "SELECT * FROM extra")
    finally:
        store.close()


def test_text_postgresql_cannot_hold_is_bad_input_there(postgres):
    store = open_store(postgres.fresh())
    try:
        with store.reader() as conn, pytest.raises(InvalidInput) as err:
            sql(conn, "SELECT count(*) FROM users WHERE name = :name", name="a\0l")
        assert err.value.code == "INVALID_INPUT"
    finally:
        store.close()


def test_question_marks_and_jsonb_operators_reach_postgresql_as_written(postgres):
    """The old store turned every ``?`` of a statement into a parameter: jsonb's ``?``
    operators could not be written, and ``%`` was doubled by hand."""
    store = open_store(postgres.fresh())
    document = {"why?": "50% ?| or @> %s", "who": ["?", "%(x)s"]}
    try:
        with store.reader() as conn:
            has, any_, text_ = conn.execute(
                select(
                    cast(literal(json.dumps(document)), JSONB).has_key("why?"),
                    cast(literal(json.dumps(document)), JSONB).has_any(
                        cast(["nope?", "who"], ARRAY(Text))
                    ),
                    literal("is it ? or %s or ?|", Text),
                )
            ).one()
        assert (has, any_, text_) == (True, True, "is it ? or %s or ?|")
        with store.transaction() as conn:
            repository.set_system_setting(conn, "note?", document, "joe ?|", 1.0)
        with store.reader() as conn:
            assert repository.load_system_settings(conn) == {"note?": document}
    finally:
        store.close()


@pytest.mark.parametrize("url", ["mysql://db/sluice", "sqlite://", "catalog.db", ""])
def test_unsupported_urls_are_refused(url):
    with pytest.raises(InvalidInput) as err:
        open_store(url)
    assert err.value.code == "UNSUPPORTED_DATABASE"


def test_an_in_memory_catalog_works_for_one_process():
    cat = Catalog.open("sqlite:///:memory:", bcrypt_rounds=4)
    try:
        assert add_admin(cat, "joe", PASSWORD)
        joe = cat.sessions.login("joe", PASSWORD)[1]
        assert [o.name for o in cat.objects.lookup(joe)] == ["system", *BOX_TYPES]
    finally:
        cat.close()


@pytest.mark.parametrize(
    "settings",
    [{"bcrypt_rounds": 3}, {"bcrypt_rounds": 32}, {"bcrypt_rounds": "12"}, {"session_ttl": 0}],
)
def test_bad_settings_are_refused_when_the_catalog_opens(settings):
    with pytest.raises(InvalidInput) as err:
        Catalog.open("sqlite:///:memory:", **settings)
    assert err.value.code == "INVALID_SETTING"
