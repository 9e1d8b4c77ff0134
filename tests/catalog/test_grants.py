"""Who may grant and revoke what: owners, CHANGE_PERM holders, administrators."""

from __future__ import annotations

import pytest

from boxes.errors import Denied
from catalog import Action, ObjectType
from catalog.authorizer import decide

T, A = ObjectType, Action


@pytest.fixture
def stream(cat, admin, people):
    people({"al": ["CUSTOMER1"], "bob": ["CUSTOMER2"], "cy": ["CUSTOMER3"]})
    cat.objects.add_schema(admin, "s", {"fields": {"x": "long"}})
    cat.objects.add_stream(admin, "in1", "s")
    return admin


def allowed(cat, subject, action, name="in1"):
    snapshot = cat.core.snapshot
    return decide(subject, action, snapshot.find(T.STREAM, name), snapshot).allowed


def test_change_perm_lets_a_holder_pass_on_only_what_it_holds(cat, stream, login):
    admin, al, bob = stream, login("al"), login("bob")
    for action in (A.VIEW_OBJECT, A.READ_TUPLE, A.CHANGE_PERM):
        cat.grants.grant(admin, "CUSTOMER1", action, T.STREAM, "in1")
    assert cat.grants.grant(al, "CUSTOMER2", "READ_TUPLE", "stream", "in1")
    assert not cat.grants.grant(al, "CUSTOMER2", A.READ_TUPLE, T.STREAM, "in1")
    assert allowed(cat, bob, A.READ_TUPLE)
    with pytest.raises(Denied) as err:
        cat.grants.grant(al, "CUSTOMER2", A.WRITE, T.STREAM, "in1")
    assert err.value.code == "NOT_HELD"
    assert cat.grants.revoke(al, "CUSTOMER2", A.READ_TUPLE, T.STREAM, "in1")
    assert not allowed(cat, bob, A.READ_TUPLE)


def test_revoking_a_granter_does_not_cascade(cat, stream, login):
    admin, al, bob = stream, login("al"), login("bob")
    for action in (A.VIEW_OBJECT, A.READ_TUPLE, A.CHANGE_PERM):
        cat.grants.grant(admin, "CUSTOMER1", action, T.STREAM, "in1")
    cat.grants.grant(al, "CUSTOMER2", A.READ_TUPLE, T.STREAM, "in1")
    cat.grants.revoke(admin, "CUSTOMER1", A.CHANGE_PERM, T.STREAM, "in1")
    assert allowed(cat, bob, A.READ_TUPLE)
    with pytest.raises(Denied):
        cat.grants.revoke(al, "CUSTOMER2", A.READ_TUPLE, T.STREAM, "in1")


def test_an_administrator_may_revoke_what_it_could_not_grant(cat, stream, people, login):
    admin = stream
    cat.grants.grant(admin, "CUSTOMER1", A.ADD, T.SYSTEM, "system")
    al = login("al")
    cat.objects.add_schema(al, "mine", {"fields": {"x": "long"}})
    cat.grants.grant(al, "CUSTOMER2", A.VIEW_OBJECT, T.SCHEMA, "mine")
    people({"ann": ["ADMIN"]})
    ann = login("ann")
    assert [r.role for r in cat.grants.of(ann, T.SCHEMA, "mine")] == ["CUSTOMER1", "CUSTOMER2"]
    with pytest.raises(Denied):
        cat.grants.grant(ann, "CUSTOMER3", A.VIEW_OBJECT, T.SCHEMA, "mine")
    assert cat.grants.revoke(ann, "CUSTOMER2", A.VIEW_OBJECT, T.SCHEMA, "mine")
    (entry,) = cat.audit(ann, event="revoke")
    assert (entry.user, entry.object, entry.details) == (
        "ann",
        "schema:mine",
        {"role": "CUSTOMER2", "action": "VIEW_OBJECT"},
    )


def test_the_grant_list_of_an_object_is_for_those_who_manage_it(cat, stream, login):
    admin, al = stream, login("al")
    cat.grants.grant(admin, "CUSTOMER1", A.VIEW_OBJECT, T.STREAM, "in1")
    with pytest.raises(Denied):
        cat.grants.of(al, T.STREAM, "in1")
    cat.grants.grant(admin, "CUSTOMER1", A.CHANGE_PERM, T.STREAM, "in1")
    rows = [r.to_dict() for r in cat.grants.of(al, T.STREAM, "in1")]
    assert rows[0] == {
        "type": "stream",
        "name": "in1",
        "role": "ADMIN",
        "via": "owner",
        "actions": sorted(
            a.value
            for a in (
                A.VIEW_OBJECT,
                A.SUBSCRIBE,
                A.READ_TUPLE,
                A.READ_AGGREGATE,
                A.WRITE,
                A.CHANGE_PERM,
            )
        ),
    }
    assert rows[1] == {
        "type": "stream",
        "name": "in1",
        "role": "CUSTOMER1",
        "via": "grant",
        "actions": ["CHANGE_PERM", "VIEW_OBJECT"],
    }
    with pytest.raises(Denied):
        cat.grants.table(al)
