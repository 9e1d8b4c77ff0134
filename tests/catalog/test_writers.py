"""Two catalogs on one database (two servers, or ``sluice`` beside the server) changing it at
once: their writes run one after the other, so the invariants a change checks inside its
transaction (an enabled administrator stays, names are unique) hold across them.

The first change is held inside its transaction, after its writes, until the second is waiting
for the write lock (on PostgreSQL, seen in ``pg_locks``); then the first commits.
"""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from boxes.errors import Conflict, NotFound
from catalog import Action, Catalog, ObjectType
from tests.catalog.conftest import PASSWORD, sql

WAIT = 10.0


@pytest.fixture
def other(cat, admin, people, db_url, clock):
    """A second catalog on the same database, with joe logged in there too."""
    people({"ann": ["ADMIN"], "al": ["CUSTOMER1"]})
    second = Catalog.open(db_url, bcrypt_rounds=4, clock=clock)
    yield second, second.sessions.login("joe", PASSWORD)[1]
    second.close()


def _held(cat, monkeypatch) -> tuple[threading.Event, threading.Event]:
    """``cat``'s next change stops inside its transaction (at its audit entry) until released."""
    inside, release = threading.Event(), threading.Event()
    log = cat.core.log

    def held_log(*args, **kwargs):
        log(*args, **kwargs)
        if len(args) > 5 or "conn" in kwargs:
            inside.set()
            assert release.wait(WAIT)

    monkeypatch.setattr(cat.core, "log", held_log)
    return inside, release


def _second_waits(db_url: str, writer) -> None:
    """Until the second catalog's writer waits for PostgreSQL's advisory lock (SQLite shows
    nothing)."""
    if not db_url.startswith("postgresql"):
        return
    deadline = time.monotonic() + WAIT
    with psycopg.connect(db_url, autocommit=True) as conn:
        while not conn.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            " AND pid = %s",
            (writer.conn.connection.dbapi_connection.info.backend_pid,),
        ).fetchone()[0]:
            assert time.monotonic() < deadline, "the second writer never waited for the lock"
            time.sleep(0.005)  # poll: the lock wait is visible only in pg_locks, no event


def race(cat, other, monkeypatch, db_url, first, second) -> list:
    """What ``first`` (on ``cat``) and ``second`` (on ``other``) returned or raised."""
    inside, release = _held(cat, monkeypatch)
    results: list = [None, None]

    def run(i, fn):
        try:
            results[i] = fn()
        except Exception as exc:  # asserted on by the caller
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i, fn)) for i, fn in enumerate((first, second))]
    threads[0].start()
    assert inside.wait(WAIT)
    threads[1].start()
    try:
        _second_waits(db_url, other.core.store)
    finally:
        release.set()
        for t in threads:
            t.join(WAIT)
    return results


def test_two_writers_cannot_remove_the_last_two_administrators(
    cat, admin, other, db_url, monkeypatch
):
    second, joe_there = other
    first_result, second_result = race(
        cat,
        second,
        monkeypatch,
        db_url,
        lambda: cat.accounts.unassign_role(admin, "ann", "ADMIN"),
        lambda: second.accounts.unassign_role(joe_there, "joe", "ADMIN"),
    )
    assert first_result is None
    assert isinstance(second_result, Conflict) and second_result.code == "LAST_ADMINISTRATOR"
    for each in (cat, second):
        each.core.settle()
        assert each.core.snapshot.administrators() == ["joe"]


def test_two_writers_cannot_take_the_same_name(cat, admin, other, db_url, monkeypatch):
    second, joe_there = other
    first_result, second_result = race(
        cat,
        second,
        monkeypatch,
        db_url,
        lambda: cat.accounts.add_user(admin, "zed", PASSWORD).id,
        lambda: second.accounts.add_user(joe_there, "zed", PASSWORD).id,
    )
    assert isinstance(first_result, int)
    assert isinstance(second_result, Conflict)
    # Checked against a snapshot without zed, refused by the database's unique name.
    if db_url.startswith("postgresql"):
        assert second_result.code == "CONFLICT"
    for each in (cat, second):
        each.core.settle()
        assert each.core.snapshot.users_by_name["zed"].id == first_result
    with cat.core.store.reader() as conn:
        assert sql(conn, "SELECT count(*) FROM users WHERE name = 'zed'").scalar() == 1


def test_a_grant_on_an_object_dropped_meanwhile_is_a_conflict(
    cat, admin, other, db_url, monkeypatch
):
    second, joe_there = other
    cat.objects.add_schema(admin, "s", {"fields": {"x": "long"}})
    cat.objects.add_stream(admin, "in1", "s")
    second.core.settle()  # no reload of second's may wait for the lock during the race
    first_result, second_result = race(
        cat,
        second,
        monkeypatch,
        db_url,
        lambda: cat.objects.drop(admin, ObjectType.STREAM, "in1"),
        lambda: second.grants.grant(
            joe_there, "CUSTOMER1", Action.VIEW_OBJECT, ObjectType.STREAM, "in1"
        ),
    )
    assert first_result.name == "in1"  # dropped
    # Checked against a snapshot with in1, refused by the database's foreign key; or, if the
    # second catalog read the drop before it checked (it reads every commit first), refused
    # as not found. Either way nothing is written.
    assert isinstance(second_result, (Conflict, NotFound))
    with cat.core.store.reader() as conn:
        assert sql(conn, "SELECT count(*) FROM permissions").scalar() == 0
