"""The SQLite store: versioned migrations, persistence across restarts, database URLs."""

from __future__ import annotations

import sqlite3

import pytest

from boxes.errors import InvalidInput
from catalog import Catalog, ObjectType
from catalog.bootstrap import add_admin
from catalog.store import Store, migrations
from tests.catalog.conftest import BOX_TYPES, PASSWORD


def _schema_version(store: Store) -> int:
    return store.conn.execute("PRAGMA user_version").fetchone()[0]


def test_a_new_file_is_migrated_to_the_latest_version(db_url):
    store = Store(db_url)
    try:
        assert _schema_version(store) == migrations()[-1][0]
        store.migrate()
        assert _schema_version(store) == migrations()[-1][0]
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


def test_a_failed_migration_leaves_the_file_as_it_was(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'c.db'}"
    Store(url).close()
    broken = migrations() + [(999, "CREATE TABLE extra (x INTEGER); SELECT * FROM nowhere;")]
    monkeypatch.setattr("catalog.store.migrations", lambda: broken)
    with pytest.raises(sqlite3.OperationalError):
        Store(url)
    conn = sqlite3.connect(tmp_path / "c.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == migrations()[-1][0]
    assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'extra'").fetchall() == []
    conn.close()


@pytest.mark.parametrize("url", ["postgresql://db/sluice", "sqlite://", "catalog.db", ""])
def test_unsupported_urls_are_refused(url):
    with pytest.raises(InvalidInput) as err:
        Store(url)
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
def test_bad_settings_are_refused_when_the_catalog_opens(db_url, settings):
    with pytest.raises(InvalidInput) as err:
        Catalog.open(db_url, **settings)
    assert err.value.code == "INVALID_SETTING"


def test_diagrams_stored_before_histories_existed_get_their_first_version(tmp_path, monkeypatch):
    url, shipped = f"sqlite:///{tmp_path / 'c.db'}", migrations()
    monkeypatch.setattr("catalog.store.migrations", lambda: [m for m in shipped if m[0] <= 5])
    Store(url).close()
    conn = sqlite3.connect(tmp_path / "c.db")
    conn.execute("INSERT INTO roles (name, created_at) VALUES ('R', 1.0)")
    conn.execute(
        "INSERT INTO objects (type, name, owner_user, owner_role, spec, status, created_at)"
        " VALUES ('diagram', 'q1', 'al', 'R', '{\"name\": \"q1\"}', 'stopped', 2.0)"
    )
    conn.commit()
    conn.close()
    monkeypatch.undo()
    store = Store(url)
    try:
        rows = store.conn.execute(
            "SELECT diagram, version, spec, saved_by, saved_role, saved_at FROM diagram_versions"
        ).fetchall()
        assert rows == [("q1", 1, '{"name": "q1"}', "al", "R", 2.0)]
    finally:
        store.close()
