"""Revocation reaches the very next decision, and concurrent changes keep the store consistent."""

from __future__ import annotations

import threading

import pytest

from boxes.errors import Denied, Unauthenticated
from catalog import Action, Catalog, DiagramSpec, ObjectType
from catalog.authorizer import decide
from catalog.core import load
from tests.catalog.conftest import PASSWORD, sql

T, A = ObjectType, Action
STREAMS = [f"in{i}" for i in range(8)]


@pytest.fixture
def streams(cat, admin, people):
    people({"al": ["CUSTOMER1"], "bob": ["CUSTOMER2"]})
    cat.objects.add_schema(admin, "s", {"fields": {"x": "long"}})
    for name in STREAMS:
        cat.objects.add_stream(admin, name, "s")
    return admin


def test_revocation_is_seen_by_the_next_decision_and_readable_set(cat, streams, login):
    admin, al = streams, login("al")
    for action in (A.VIEW_OBJECT, A.READ_TUPLE):
        cat.grants.grant(admin, "CUSTOMER1", action, T.STREAM, "in3")
    obj = cat.core.snapshot.find(T.STREAM, "in3")
    assert decide(al, A.READ_TUPLE, obj, cat.core.snapshot).allowed
    assert cat.sessions.readable_sources(al) == 1 << obj.source_index
    cat.grants.revoke(admin, "CUSTOMER1", A.READ_TUPLE, T.STREAM, "in3")
    assert not decide(al, A.READ_TUPLE, obj, cat.core.snapshot).allowed
    assert cat.sessions.readable_sources(al) == 0
    assert [o.name for o in cat.objects.lookup(al)] == ["in3"]


def test_a_change_by_another_process_is_seen_once_noticed(cat, streams, login, db_url, clock):
    """A second Catalog on the same database stands for ``sluice`` run while the server runs,
    or another server. ``settle`` waits for PostgreSQL's notice; SQLite's is there at once."""
    al = login("al")
    other = Catalog.open(db_url, bcrypt_rounds=4, clock=clock)
    try:
        joe = other.sessions.login("joe", "correct horse battery")[1]
        other.grants.grant(joe, "CUSTOMER1", A.READ_TUPLE, T.STREAM, "in0")
        cat.core.store.settle()
        assert cat.sessions.readable_sources(al) == 1
        other.accounts.set_enabled(joe, "al", False)
        cat.core.store.settle()
        assert cat.sessions.readable_sources(al) == 0
    finally:
        other.close()


def test_a_change_made_elsewhere_counts_before_its_notice_arrives(
    cat, streams, login, db_url, clock, monkeypatch
):
    """A client turning to this server right after another answered it: its session, a schema
    added there and a grant made there count here at once, though no notice has come (frozen
    here), because a refusal looks at the database once before it stands. The server's guard
    authorizes each request first (as here), so the operation then runs on the newer snapshot."""
    al = login("al")
    other = Catalog.open(db_url, bcrypt_rounds=4, clock=clock)
    try:
        cat.core.store.settle()
        frozen = cat.core.store.data_version()
        monkeypatch.setattr(cat.core.store, "data_version", lambda: frozen)
        token, joe = other.sessions.login("joe", "correct horse battery")
        assert cat.sessions.resolve(token) == joe
        other.objects.add_schema(joe, "fresh", {"fields": {"y": "long"}})
        cat.authorize(joe, "streams.create", {"name": "made_here", "schema": "fresh"})
        cat.objects.add_stream(joe, "made_here", "fresh")
        other.core.store.settle()  # the other server is not the one under test
        other.grants.grant(joe, "CUSTOMER1", A.VIEW_OBJECT, T.STREAM, "made_here")
        assert cat.core.find(al, T.STREAM, "made_here").name == "made_here"
        other.grants.grant(joe, "CUSTOMER1", A.READ_TUPLE, T.STREAM, "made_here")
        assert cat.core.require(al, A.READ_TUPLE, cat.core.find(al, T.STREAM, "made_here"))
        denials = len(cat.audit(joe, allowed=False))
        with pytest.raises(Denied):  # still refused after the look: audited once
            cat.core.require(al, A.CHANGE_PERM, cat.core.find(al, T.STREAM, "made_here"))
        assert len(cat.audit(joe, allowed=False)) == denials + 1
    finally:
        other.close()


def test_a_request_sees_every_change_committed_before_it_on_any_server(
    cat, streams, db_url, clock, monkeypatch
):
    """Every request resolves its session first (``Sessions.resolve``), and that brings the
    snapshot up to every change committed before it, on any server: another server's grant
    shows in a list here, and its revocation holds here at once, though no notice has come
    (frozen here; on SQLite ``data_version`` is the real thing, not a notice, so nothing is
    frozen)."""
    token, al = cat.sessions.login("al", PASSWORD)
    other = Catalog.open(db_url, bcrypt_rounds=4, clock=clock)
    try:
        if not cat.core.store.exact:
            cat.core.store.settle()
            frozen = cat.core.store.data_version()
            monkeypatch.setattr(cat.core.store, "data_version", lambda: frozen)
        other.grants.grant(streams, "CUSTOMER1", A.VIEW_OBJECT, T.STREAM, "in3")
        other.grants.grant(streams, "CUSTOMER1", A.READ_TUPLE, T.STREAM, "in3")
        cat.sessions.resolve(token)
        assert [o.name for o in cat.objects.lookup(al)] == ["in3"]
        obj = cat.core.find(al, T.STREAM, "in3")
        assert cat.sessions.readable_sources(al) == 1 << obj.source_index
        other.grants.revoke(streams, "CUSTOMER1", A.READ_TUPLE, T.STREAM, "in3")
        cat.sessions.resolve(token)
        with pytest.raises(Denied):
            cat.core.require(al, A.READ_TUPLE, obj)
        assert cat.sessions.readable_sources(al) == 0
    finally:
        other.close()


def test_only_catalog_changes_reload_the_snapshot(cat, streams, db_url, clock):
    other = Catalog.open(db_url, bcrypt_rounds=4, clock=clock)
    try:
        before = cat.core.snapshot
        with pytest.raises(Unauthenticated):
            other.sessions.login("al", "a wrong password")
        cat.core.store.settle()
        assert cat.core.snapshot is before
        joe = other.sessions.login("joe", "correct horse battery")[1]
        cat.core.store.settle()
        assert cat.core.snapshot is not before
        assert joe.session_id in cat.core.snapshot.sessions
    finally:
        other.close()


def test_concurrent_grants_and_revokes_leave_a_consistent_store(cat, streams, login):
    admin = streams
    errors = []

    def churn(role, rounds):
        try:
            for i in range(rounds):
                stream = STREAMS[i % len(STREAMS)]
                cat.grants.grant(admin, role, A.READ_TUPLE, T.STREAM, stream)
                if i % 3:
                    cat.grants.revoke(admin, role, A.READ_TUPLE, T.STREAM, stream)
        except Exception as exc:  # collected and asserted on below
            errors.append(exc)

    readers = [login("al"), login("bob")]
    stop = threading.Event()

    def read():
        try:
            while not stop.is_set():
                for reader in readers:
                    mask = cat.sessions.readable_sources(reader)
                    assert mask < 1 << len(STREAMS)
        except Exception as exc:  # collected and asserted on below
            errors.append(exc)

    watcher = threading.Thread(target=read)
    workers = [
        threading.Thread(target=churn, args=(role, 40))
        for role in ("CUSTOMER1", "CUSTOMER2", "CUSTOMER1", "CUSTOMER2")
    ]
    watcher.start()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    stop.set()
    watcher.join()
    assert errors == []
    with cat.core.store.transaction() as conn:
        fresh = load(conn)
    assert fresh.held == cat.core.snapshot.held
    assert fresh.read_masks == cat.core.snapshot.read_masks
    for reader in readers:
        expected = 0
        for role in reader.roles:
            expected |= fresh.read_masks[role]
        assert cat.sessions.readable_sources(reader) == expected
    with cat.core.store.reader() as conn:
        grants = sql(conn, "SELECT count(*) FROM permissions").scalar()
        audit = sql(
            conn,
            "SELECT sum(CASE event WHEN 'grant' THEN 1 ELSE -1 END) FROM audit"
            " WHERE event IN ('grant', 'revoke')",
        ).scalar()
    assert grants == audit


def test_a_decision_sees_all_of_a_diagram_or_none_of_it(cat, streams, login):
    admin = streams
    cat.grants.grant(admin, "CUSTOMER1", A.ADD, T.SYSTEM, "system")
    for name in STREAMS:
        cat.grants.grant(admin, "CUSTOMER1", A.VIEW_OBJECT, T.STREAM, name)
        cat.grants.grant(admin, "CUSTOMER1", A.READ_TUPLE, T.STREAM, name)
    cat.grants.grant(admin, "CUSTOMER1", A.VIEW_OBJECT, T.SCHEMA, "s")
    al = login("al")
    seen = set()
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            seen.add(sum(o.type is not T.STREAM and o.name != "s" for o in cat.objects.lookup(al)))

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        for i in range(5):
            cat.objects.add_diagram(
                al,
                DiagramSpec(
                    f"q{i}", tuple(STREAMS), tuple(f"b{j}" for j in range(20)), (f"out{i}",)
                ),
            )
    finally:
        stop.set()
        watcher.join()
    # A diagram here is 22 objects (itself, 20 boxes, 1 output): never a part of one.
    assert seen <= {22 * i for i in range(6)}
    assert len(cat.objects.lookup(al)) == 1 + len(STREAMS) + 22 * 5
