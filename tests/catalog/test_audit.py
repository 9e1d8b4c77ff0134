"""The audit log: every change, login, failed login and denial, readable by administrators."""

from __future__ import annotations

import pytest

from boxes.errors import Denied, NotFound, Unauthenticated
from catalog import Action, ObjectType
from tests.catalog.conftest import PASSWORD

T, A = ObjectType, Action


def test_the_log_tells_who_when_what_and_why(cat, admin, people, login, clock):
    people({"al": ["CUSTOMER1"]})
    with pytest.raises(Unauthenticated):
        cat.sessions.login("al", "not the password")
    al = login("al")
    clock.now += 5
    with pytest.raises(Denied):
        cat.objects.add_schema(al, "t", {"fields": {"x": "long"}})
    cat.grants.grant(admin, "CUSTOMER1", A.ADD, T.SYSTEM, "system")
    events = [(e.user, e.event, e.object, e.allowed, e.reason) for e in cat.audit(admin)]
    assert events[:5] == [
        ("joe", "grant", "system:system", True, "owner"),
        ("al", "schema_add", "system:system", False, "no active role holds ADD on system system"),
        ("al", "login", f"session:{al.session_id}", True, "password verified"),
        (None, "login_failed", None, False, "wrong password"),
        ("joe", "user_add", "user:al", True, "administrator"),
    ]
    (denial,) = cat.audit(admin, allowed=False, user="al")
    assert denial.at == clock.now and denial.roles == ("CUSTOMER1",)
    assert denial.details == {"action": "ADD", "rule": "default_deny"}


def test_filters_and_paging(cat, admin, people):
    people({f"u{i}": [] for i in range(5)})
    adds = cat.audit(admin, event="user_add")
    assert [e.object for e in adds] == [f"user:u{i}" for i in reversed(range(5))] + ["user:joe"]
    page = cat.audit(admin, event="user_add", limit=2, before_id=adds[1].id)
    assert [e.object for e in page] == ["user:u2", "user:u1"]
    assert cat.audit(admin, since=adds[0].at + 1) == []


def test_only_administrators_read_the_log(cat, admin, people, login):
    people({"al": ["CUSTOMER1"]})
    al = login("al")
    with pytest.raises(Denied):
        cat.audit(al)
    assert cat.audit(admin, event="audit_read")[0].user == "al"


def test_lookups_of_unseen_objects_are_logged_as_nothing_more_than_not_found(
    cat, admin, people, login
):
    people({"al": ["CUSTOMER1"]})
    cat.objects.add_schema(admin, "s", {"fields": {"x": "long"}})
    al = login("al")
    with pytest.raises(NotFound):
        cat.grants.grant(al, "CUSTOMER1", A.VIEW_OBJECT, T.SCHEMA, "s")
    assert cat.audit(admin, user="al", allowed=False) == []
    assert PASSWORD not in repr(cat.audit(admin, limit=1000))
