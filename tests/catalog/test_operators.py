"""Operator-based access control on a real catalog file: USE on box types, role limits and
checked when a diagram is added and deployed, with nothing half-applied."""

from __future__ import annotations

import pytest

from boxes.cost import cost_of
from boxes.document import validate
from boxes.errors import Denied, InvalidInput
from boxes.types import parse_schema
from catalog import Action, Catalog, DiagramSpec, ObjectType
from catalog.bootstrap import add_admin
from tests.catalog.conftest import BOX_TYPES, PASSWORD, sql

T, A = ObjectType, Action
FIELDS = {"fields": {"t": "timestamp", "x": "long"}, "event_time": "t"}


def spec(name, size="10s", slide=None):
    window = {"size": size, **({"slide": slide} if slide else {})}
    doc = {
        "version": 1,
        "name": name,
        "inputs": {"in1": {}},
        "boxes": {
            "a": {
                "type": "aggregate",
                "in": "in1",
                "window": window,
                "aggregates": {"n": "count()"},
            }
        },
        "outputs": {f"{name}_out": {"from": "a"}},
    }
    plan = validate(doc, {"in1": parse_schema(FIELDS, "in1")[0]})
    return DiagramSpec(name, ("in1",), ("a",), (f"{name}_out",), document=doc, cost=cost_of(plan))


@pytest.fixture
def al(cat, admin, people, login):
    people({"al": ["CUSTOMER1"]})
    cat.objects.add_schema(admin, "s", FIELDS)
    cat.objects.add_stream(admin, "in1", "s")
    cat.grants.grant(admin, "CUSTOMER1", A.ADD, T.SYSTEM, "system")
    for action in (A.VIEW_OBJECT, A.READ_TUPLE):
        cat.grants.grant(admin, "CUSTOMER1", action, T.STREAM, "in1")
    cat.grants.grant(admin, "CUSTOMER1", A.VIEW_OBJECT, T.SCHEMA, "s")
    return login("al")


def test_a_box_type_needs_use_and_a_refusal_creates_nothing(cat, admin, al):
    with pytest.raises(Denied) as err:
        cat.objects.add_diagram(al, spec("q1"))
    assert err.value.code == "BOX_TYPE_NOT_ALLOWED" and "aggregate" in err.value.message
    assert cat.core.snapshot.find(T.DIAGRAM, "q1") is None
    cat.grants.grant(admin, "CUSTOMER1", A.USE, T.BOX_TYPE, "aggregate")
    assert cat.objects.add_diagram(al, spec("q1"))[0].name == "q1"


def test_the_attack_is_refused_by_a_role_limit_and_creates_nothing(cat, admin, al):
    cat.grants.grant(admin, "CUSTOMER1", A.USE, T.BOX_TYPE, "aggregate")
    cat.operators.set_limits(admin, "CUSTOMER1", {"windows_per_tuple": 100})
    with pytest.raises(Denied) as err:
        cat.objects.add_diagram(al, spec("q1", "1h", "1ms"))
    assert err.value.code == "OVER_LIMIT"
    assert "windows_per_tuple is 3600000; the limit of role CUSTOMER1 is 100.0" in err.value.message
    assert cat.core.snapshot.find(T.DIAGRAM, "q1") is None
    denial = cat.audit(admin, event="diagram_add")[0]
    assert not denial.allowed and denial.details["excesses"][0]["parameter"] == "windows_per_tuple"


def test_role_limits_apply_at_add_and_again_at_deploy(cat, admin, al):
    cat.grants.grant(admin, "CUSTOMER1", A.USE, T.BOX_TYPE, "aggregate")
    cat.operators.set_limits(admin, "CUSTOMER1", {"window_seconds": 60})
    with pytest.raises(Denied) as err:
        cat.objects.add_diagram(al, spec("big", "10m"))
    assert "box a: window_seconds is 600.0; the limit of role CUSTOMER1 is 60.0" in str(err.value)
    cat.objects.add_diagram(al, spec("q1", "30s"))
    cat.operators.set_limits(admin, "CUSTOMER1", {"window_seconds": 20})
    with pytest.raises(Denied) as err:
        cat.objects.set_query_status(al, "q1", "running")
    assert err.value.code == "OVER_LIMIT"
    assert cat.objects.get(al, T.DIAGRAM, "q1").status == "stopped"
    cat.grants.revoke(admin, "CUSTOMER1", A.USE, T.BOX_TYPE, "aggregate")
    cat.operators.set_limits(admin, "CUSTOMER1", {"window_seconds": None})
    with pytest.raises(Denied) as err:
        cat.objects.set_query_status(al, "q1", "running")
    assert err.value.code == "BOX_TYPE_NOT_ALLOWED"


def test_limits_are_set_by_administrators_all_or_none(cat, admin, al):
    with pytest.raises(Denied):
        cat.operators.set_limits(al, "CUSTOMER1", {"window_seconds": 1})
    with pytest.raises(InvalidInput) as err:
        cat.operators.set_limits(admin, "CUSTOMER1", {"window_seconds": 5, "sort_rows": 1})
    assert err.value.code == "UNKNOWN_LIMIT"
    with pytest.raises(InvalidInput) as err:
        cat.operators.set_limits(
            admin, "CUSTOMER1", {"window_seconds": 5, "join_bound_seconds": -1}
        )
    assert err.value.code == "INVALID_LIMIT"
    assert cat.operators.limits_of(admin, "CUSTOMER1") == {}
    assert cat.operators.set_limits(admin, "CUSTOMER1", {"window_seconds": 5}) == {
        "window_seconds": 5
    }
    assert cat.audit(admin, event="role_limits")[0].details == {
        "parameter": "window_seconds",
        "old": None,
        "new": 5.0,
    }


def test_an_upgraded_catalog_gets_box_types_and_its_diagram_makers_keep_working(
    cat, admin, al, db_url, clock
):
    with cat.core.store.transaction() as conn:
        sql(conn, "DELETE FROM objects WHERE type = 'box_type'")
        sql(conn, "UPDATE counters SET value = value + 1 WHERE name = 'catalog_version'")
    cat.close()
    again = Catalog.open(db_url, bcrypt_rounds=4, clock=clock)
    try:
        snapshot = again.core.snapshot
        assert (
            sorted(o.name for o in snapshot.objects.values() if o.type is T.BOX_TYPE) == BOX_TYPES
        )
        al = again.sessions.login("al", PASSWORD)[1]
        assert again.objects.add_diagram(al, spec("q1"))[0].owner_role == "CUSTOMER1"
    finally:
        again.close()


def test_a_fresh_catalog_grants_use_to_nobody_but_the_owner(db_url):
    cat = Catalog.open(db_url, bcrypt_rounds=4)
    try:
        add_admin(cat, "joe", PASSWORD)
        assert not cat.core.snapshot.held
    finally:
        cat.close()
