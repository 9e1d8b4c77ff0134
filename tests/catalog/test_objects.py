"""Owned objects: source indexes, diagrams and what they hold, status, dropping."""

from __future__ import annotations

import json

import pytest

from boxes.errors import Conflict, Denied, InvalidInput, NotFound
from catalog import Action, DiagramSpec, ObjectType, repository
from tests.catalog.conftest import sql

T, A = ObjectType, Action


@pytest.fixture
def al(cat, admin, people, login):
    people({"al": ["CUSTOMER1"], "bob": ["CUSTOMER2"]})
    cat.objects.add_schema(
        admin, "s", {"fields": {"t": "timestamp", "x": "long"}, "event_time": "t"}
    )
    cat.objects.add_stream(admin, "in1", "s")
    cat.grants.grant(admin, "CUSTOMER1", A.ADD, T.SYSTEM, "system")
    cat.grants.grant(admin, "CUSTOMER1", A.VIEW_OBJECT, T.SCHEMA, "s")
    for action in (A.VIEW_OBJECT, A.READ_TUPLE):
        cat.grants.grant(admin, "CUSTOMER1", action, T.STREAM, "in1")
    return login("al")


def test_a_schema_keeps_its_definition(cat, admin, al):
    schema = cat.objects.get(al, T.SCHEMA, "s")
    assert json.loads(schema.spec) == {"fields": {"t": "timestamp", "x": "long"}, "event_time": "t"}
    assert schema.to_dict() == {
        "id": schema.id,
        "type": "schema",
        "name": "s",
        "owner": {"user": "joe", "role": "ADMIN"},
    }


def test_source_indexes_are_stable_and_never_reused(cat, admin, al):
    cat.objects.add_stream(admin, "in2", "s")
    indexes = {o.name: o.source_index for o in cat.objects.lookup(admin) if o.kind == "input"}
    assert indexes == {"in1": 0, "in2": 1}
    cat.objects.drop(admin, T.STREAM, "in2")
    cat.objects.add_stream(admin, "in2", "s")
    assert cat.objects.get(admin, T.STREAM, "in2").source_index == 2
    assert cat.objects.get(admin, T.STREAM, "in1").source_index == 0


def test_a_diagram_brings_its_boxes_streams_and_outputs(cat, al):
    document = {"version": 1, "name": "q1", "boxes": {"f": {"type": "filter"}}}
    created = cat.objects.add_diagram(
        al, DiagramSpec("q1", ("in1", "in1"), ("f", "g"), ("out1",), ("mid",), document)
    )
    assert [(o.type, o.name, o.kind) for o in created] == [
        (T.DIAGRAM, "q1", None),
        (T.BOX, "q1.f", None),
        (T.BOX, "q1.g", None),
        (T.STREAM, "q1.mid", "derived"),
        (T.OUTPUT, "out1", None),
    ]
    diagram = created[0]
    assert json.loads(diagram.spec) == document and diagram.status == "stopped"
    assert all(o.parent_id == diagram.id for o in created[1:])
    assert cat.objects.get(al, T.STREAM, "q1.mid").source_index is None
    (entry,) = cat.audit(cat.sessions.login("joe", "correct horse battery")[1], event="diagram_add")
    assert entry.details == {"inputs": ["in1", "in1"], "objects": 5}


def test_the_query_status_needs_set_query_status(cat, al, login):
    cat.objects.add_diagram(al, DiagramSpec("q1", ("in1",), ("f",), ("out1",)))
    assert cat.objects.set_query_status(al, "q1", "running").status == "running"
    bob = login("bob")
    with pytest.raises(NotFound):
        cat.objects.set_query_status(bob, "q1", "stopped")
    cat.grants.grant(al, "CUSTOMER2", A.VIEW_OBJECT, T.DIAGRAM, "q1")
    with pytest.raises(Denied):
        cat.objects.set_query_status(bob, "q1", "stopped")
    cat.grants.grant(al, "CUSTOMER2", A.SET_QUERY_STATUS, T.DIAGRAM, "q1")
    assert cat.objects.set_query_status(bob, "q1", "stopped").status == "stopped"


def test_a_diagram_created_running_takes_one_transaction_and_audits_both(cat, al):
    with cat.core.store.reader() as conn:
        before = repository.catalog_version(conn)
    created = cat.objects.add_diagram(
        al, DiagramSpec("q1", ("in1",), ("f",), ("out1",)), running=True
    )
    assert created[0].status == "running"
    assert cat.objects.get(al, T.DIAGRAM, "q1").status == "running"
    with cat.core.store.reader() as conn:
        assert repository.catalog_version(conn) == before + 1  # one change, not two
    joe = cat.sessions.login("joe", "correct horse battery")[1]
    (added,) = cat.audit(joe, event="diagram_add")
    (running,) = cat.audit(joe, event="query_status")
    assert (running.object, running.allowed, running.details) == (
        "diagram:q1",
        True,
        {"status": "running"},
    )


def test_dropping_a_diagram_drops_what_it_holds_and_frees_its_inputs(cat, admin, al):
    cat.objects.add_diagram(al, DiagramSpec("q1", ("in1",), ("f",), ("out1",), ("mid",)))
    cat.grants.grant(al, "CUSTOMER2", A.SUBSCRIBE, T.OUTPUT, "out1")
    cat.objects.drop(al, T.DIAGRAM, "q1")
    assert [o.name for o in cat.objects.lookup(al)] == ["s", "in1"]
    with cat.core.store.reader() as conn:
        orphans = "SELECT count(*) FROM permissions WHERE object_id NOT IN (SELECT id FROM objects)"
        assert sql(conn, orphans).scalar() == 0
    cat.grants.revoke(admin, "CUSTOMER1", A.READ_TUPLE, T.STREAM, "in1")
    cat.grants.revoke(admin, "CUSTOMER1", A.VIEW_OBJECT, T.STREAM, "in1")
    cat.objects.drop(admin, T.STREAM, "in1")
    assert [o.name for o in cat.objects.lookup(al)] == ["s"]


def test_several_active_roles_must_say_which_one_owns(cat, admin, people, login):
    people({"dee": ["CUSTOMER1", "CUSTOMER2"]})
    cat.grants.grant(admin, "CUSTOMER1", A.ADD, T.SYSTEM, "system")
    dee = login("dee")
    with pytest.raises(InvalidInput) as err:
        cat.objects.add_schema(dee, "t", {"fields": {"x": "long"}})
    assert err.value.code == "OWNER_ROLE_REQUIRED"
    assert (
        cat.objects.add_schema(dee, "t", {"fields": {"x": "long"}}, role="CUSTOMER2").owner_role
        == "CUSTOMER2"
    )


def test_the_owner_role_is_read_from_the_session_as_it_is_now(cat, admin, people, login):
    people({"dee": ["CUSTOMER1", "CUSTOMER2"]})
    cat.grants.grant(admin, "CUSTOMER1", A.ADD, T.SYSTEM, "system")
    dee = login("dee")
    cat.accounts.unassign_role(admin, "dee", "CUSTOMER2")
    assert dee.roles == {"CUSTOMER1", "CUSTOMER2"}
    with pytest.raises(Denied) as err:
        cat.objects.add_schema(dee, "t", {"fields": {"x": "long"}}, role="CUSTOMER2")
    assert err.value.code == "ROLE_NOT_ACTIVE"
    assert cat.objects.add_schema(dee, "t", {"fields": {"x": "long"}}).owner_role == "CUSTOMER1"


def test_an_administrator_hands_a_diagram_to_another_role(cat, admin, al, login):
    cat.objects.add_diagram(al, DiagramSpec("q1", ("in1",), ("f",), ("out1",)))
    with pytest.raises(Denied):
        cat.objects.transfer(al, T.DIAGRAM, "q1", "CUSTOMER2")
    with pytest.raises(InvalidInput):
        cat.objects.transfer(admin, T.OUTPUT, "out1", "CUSTOMER2")
    cat.objects.transfer(admin, T.DIAGRAM, "q1", "CUSTOMER2")
    bob = login("bob")
    assert [(o.name, o.owner_user, o.owner_role) for o in cat.objects.lookup(bob)] == [
        ("q1", "joe", "CUSTOMER2"),
        ("q1.f", "joe", "CUSTOMER2"),
        ("out1", "joe", "CUSTOMER2"),
    ]
    assert [o.name for o in cat.objects.lookup(al)] == ["s", "in1"]
    cat.accounts.delete_role(admin, "CUSTOMER1")


def test_replacing_a_diagram_keeps_its_owner_and_names_and_starts_its_grants_afresh(
    cat, admin, al, login
):
    cat.objects.add_diagram(al, DiagramSpec("q1", ("in1",), ("f",), ("out1",)))
    cat.grants.grant(al, "CUSTOMER2", A.SUBSCRIBE, T.OUTPUT, "out1")
    made = cat.objects.replace_diagram(al, DiagramSpec("q1", ("in1",), ("g",), ("out1", "out2")))
    assert [(o.name, o.owner_role) for o in made] == [
        ("q1", "CUSTOMER1"),
        ("q1.g", "CUSTOMER1"),
        ("out1", "CUSTOMER1"),
        ("out2", "CUSTOMER1"),
    ]
    assert cat.objects.lookup(login("bob")) == []
    (entry,) = cat.audit(admin, event="diagram_replace")
    assert entry.allowed and entry.details == {"inputs": ["in1"], "objects": 4}


@pytest.mark.parametrize(
    "who, sees, code",
    [
        ("bob", False, "NOT_FOUND"),
        ("bob", True, "PERMISSION_DENIED"),
        ("joe", True, "PERMISSION_DENIED"),
    ],
)
def test_only_the_owner_role_replaces_a_diagram(cat, admin, al, login, who, sees, code):
    cat.objects.add_diagram(al, DiagramSpec("q1", ("in1",), ("f",), ("out1",)))
    if sees:
        cat.grants.grant(al, "CUSTOMER2", A.VIEW_OBJECT, T.DIAGRAM, "q1")
    subject = admin if who == "joe" else login(who)
    with pytest.raises((NotFound, Denied)) as err:
        cat.objects.replace_diagram(subject, DiagramSpec("q1", ("in1",), ("g",), ("out1",)))
    assert err.value.code == code
    assert [o.name for o in cat.objects.lookup(al)] == ["s", "in1", "q1", "q1.f", "out1"]


def test_a_running_diagram_is_replaced_by_a_version_to_run(cat, al):
    cat.objects.add_diagram(al, DiagramSpec("q1", ("in1",), ("f",), ("out1",)))
    cat.objects.set_query_status(al, "q1", "running")
    (new, *_) = cat.objects.replace_diagram(al, DiagramSpec("q1", ("in1",), ("g",), ("out1",)))
    assert new.status == "running"


def test_a_replace_that_fails_halfway_leaves_the_old_version_and_its_name(
    cat, admin, al, login, db_url, clock, monkeypatch
):
    from catalog import Catalog, repository

    cat.objects.add_diagram(al, DiagramSpec("q1", ("in1",), ("f",), ("out1",)))
    cat.grants.grant(al, "CUSTOMER2", A.SUBSCRIBE, T.OUTPUT, "out1")
    before = [(o.type, o.name, o.owner_role) for o in cat.objects.lookup(al)]
    real_insert = repository.insert_members

    def fail_after_the_old_version_is_gone(conn, diagram, members):
        assert sql(conn, "SELECT count(*) FROM objects WHERE name = 'q1.f'").scalar() == 0
        raise OSError("disk full")  # between removing the old version and adding the new

    monkeypatch.setattr(repository, "insert_members", fail_after_the_old_version_is_gone)
    with pytest.raises(OSError):
        cat.objects.replace_diagram(al, DiagramSpec("q1", ("in1",), ("g",), ("out2",)))
    monkeypatch.setattr(repository, "insert_members", real_insert)
    assert [(o.type, o.name, o.owner_role) for o in cat.objects.lookup(al)] == before
    again = Catalog.open(db_url, bcrypt_rounds=4, clock=clock)  # and on disk
    try:
        assert [(o.type, o.name, o.owner_role) for o in again.objects.lookup(al)] == before
    finally:
        again.close()
    assert [(r.role, r.actions) for r in cat.grants.of(al, T.OUTPUT, "out1")] == [
        ("CUSTOMER1", tuple(sorted(cat.objects.get(al, T.OUTPUT, "out1").applicable))),
        ("CUSTOMER2", (A.SUBSCRIBE,)),
    ]
    bob = login("bob")
    cat.grants.grant(admin, "CUSTOMER2", A.ADD, T.SYSTEM, "system")
    cat.grants.grant(admin, "CUSTOMER2", A.VIEW_OBJECT, T.STREAM, "in1")
    cat.grants.grant(admin, "CUSTOMER2", A.READ_TUPLE, T.STREAM, "in1")
    cat.grants.grant(al, "CUSTOMER2", A.VIEW_OBJECT, T.DIAGRAM, "q1")  # a clash bob can see
    with pytest.raises(Conflict) as err:
        cat.objects.add_diagram(bob, DiagramSpec("q1", ("in1",), ("h",), ("out3",)))
    assert err.value.code == "DUPLICATE_NAME"


def test_a_name_its_creator_cannot_see_is_its_to_take_too(cat, admin, al, login):
    """Names reveal nothing hidden (catalog.names): bob's diagram, output and schema named
    like al's, which he cannot see, are made as if the names were free, each owner meaning its
    own."""
    cat.objects.add_diagram(al, DiagramSpec("q1", ("in1",), ("f",), ("out1",)))
    cat.objects.add_schema(al, "mine", {"fields": {"y": "long"}})
    bob = login("bob")
    for action in (A.VIEW_OBJECT, A.READ_TUPLE):
        cat.grants.grant(admin, "CUSTOMER2", action, T.STREAM, "in1")
    cat.grants.grant(admin, "CUSTOMER2", A.ADD, T.SYSTEM, "system")
    cat.grants.grant(admin, "CUSTOMER2", A.VIEW_OBJECT, T.SCHEMA, "s")
    with pytest.raises(NotFound):
        cat.objects.get(bob, T.DIAGRAM, "q1")
    made = cat.objects.add_diagram(bob, DiagramSpec("q1", ("in1",), ("f",), ("out1",)))
    assert [o.to_dict()["name"] for o in made] == ["q1", "q1.f", "out1"]
    cat.objects.add_schema(bob, "mine", {"fields": {"z": "long"}})
    for who, role in ((al, "CUSTOMER1"), (bob, "CUSTOMER2")):
        assert cat.objects.get(who, T.DIAGRAM, "q1").owner_role == role
        assert cat.objects.get(who, T.SCHEMA, "mine").owner_role == role
        assert cat.objects.get(who, T.OUTPUT, "out1").owner_role == role
    with pytest.raises(Conflict) as err:
        cat.objects.add_diagram(bob, DiagramSpec("q1", ("in1",), ("g",), ("out3",)))
    assert err.value.code == "DUPLICATE_NAME"  # his own, which he sees
    cat.grants.grant(al, "CUSTOMER2", A.VIEW_OBJECT, T.DIAGRAM, "q1")
    assert cat.objects.get(bob, T.DIAGRAM, "q1").owner_role == "CUSTOMER2"  # his own first
    with pytest.raises(Conflict) as err:
        cat.objects.get(admin, T.DIAGRAM, "q1")  # joe sees both, owns neither
    assert err.value.code == "NAME_AMBIGUOUS"
    with pytest.raises(Conflict) as err:  # CUSTOMER1 would hold two diagrams named q1
        cat.objects.transfer(admin, T.DIAGRAM, made[0].name, "CUSTOMER1")  # by its key
    assert err.value.code == "DUPLICATE_NAME"
    cat.objects.drop(bob, T.DIAGRAM, "q1")
    assert cat.objects.get(admin, T.DIAGRAM, "q1").owner_role == "CUSTOMER1"
