"""READ_AGGREGATE in the catalog: an action on input streams, granted and revoked like any other,
read with READ_TUPLE from one snapshot (``source_rights``) at every delivered batch."""

from __future__ import annotations

import pytest

from boxes.errors import Denied, InvalidInput
from catalog import Action, DiagramSpec, ObjectType
from catalog.core import load

T, A = ObjectType, Action


@pytest.fixture
def bob(cat, admin, people, login):
    """bob (READER) may READ_TUPLE in1 and only READ_AGGREGATE in2."""
    people({"bob": ["READER"]})
    cat.objects.add_schema(admin, "s", {"fields": {"x": "long"}})
    for stream in ("in1", "in2"):
        cat.objects.add_stream(admin, stream, "s")
    cat.grants.grant(admin, "READER", A.READ_TUPLE, T.STREAM, "in1")
    cat.grants.grant(admin, "READER", A.READ_AGGREGATE, T.STREAM, "in2")
    return login("bob")


def _bit(cat, stream: str) -> int:
    return 1 << cat.core.snapshot.find(T.STREAM, stream).source_index


def test_rights_are_read_tuple_and_read_aggregate_apart(cat, bob):
    assert cat.sessions.source_rights(bob) == (_bit(cat, "in1"), _bit(cat, "in2"))
    assert cat.sessions.readable_sources(bob) == _bit(cat, "in1")


def test_a_revoked_read_aggregate_is_gone_from_the_next_read(cat, admin, bob):
    cat.grants.revoke(admin, "READER", A.READ_AGGREGATE, T.STREAM, "in2")
    assert cat.sessions.source_rights(bob) == (_bit(cat, "in1"), 0)
    cat.grants.grant(admin, "READER", A.READ_AGGREGATE, T.STREAM, "in2")
    with cat.core.store.transaction() as conn:
        fresh = load(conn)  # the incremental snapshot equals one rebuilt from every row
    assert fresh.aggregate_masks == cat.core.snapshot.aggregate_masks
    assert fresh.read_masks == cat.core.snapshot.read_masks


def test_an_ended_session_has_no_rights(cat, bob):
    cat.sessions.logout(bob)
    assert cat.sessions.source_rights(bob) == (0, 0)


def test_read_aggregate_applies_to_input_streams_only(cat, admin, bob):
    assert A.READ_AGGREGATE in cat.core.snapshot.find(T.STREAM, "in2").applicable
    with pytest.raises(InvalidInput) as err:
        cat.grants.grant(admin, "READER", A.READ_AGGREGATE, T.SCHEMA, "s")
    assert err.value.code == "ACTION_NOT_APPLICABLE"


def test_read_aggregate_does_not_let_one_build_a_diagram_over_the_stream(cat, admin, bob):
    """A diagram reads raw tuples: creating one needs READ_TUPLE on every input."""
    cat.grants.grant(admin, "READER", A.ADD, T.SYSTEM, "system")
    cat.grants.grant(admin, "READER", A.VIEW_OBJECT, T.STREAM, "in2")
    cat.grants.grant(admin, "READER", A.VIEW_OBJECT, T.SCHEMA, "s")
    with pytest.raises(Denied) as err:
        cat.objects.add_diagram(bob, DiagramSpec("d", ("in2",), (), ("o",)))
    assert "READ_TUPLE on stream in2" in str(err.value)


def test_a_holder_of_read_aggregate_cannot_pass_on_read_tuple(cat, bob, admin):
    for action in (A.VIEW_OBJECT, A.CHANGE_PERM):
        cat.grants.grant(admin, "READER", action, T.STREAM, "in2")
    with pytest.raises(Denied):
        cat.grants.grant(bob, "READER", A.READ_TUPLE, T.STREAM, "in2")
    assert cat.sessions.readable_sources(bob) == _bit(cat, "in1")
