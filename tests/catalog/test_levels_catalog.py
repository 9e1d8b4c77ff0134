"""Chinese-Wall levels in the catalog: administration, audit, and the snapshot's policy."""

from __future__ import annotations

import pytest

from boxes import codes
from boxes.errors import SluiceError
from catalog import Catalog
from catalog.clearance import PUBLIC
from catalog.model import ObjectType


@pytest.fixture
def walls(cat, admin, people):
    """Two COI classes of two companies each, streams of both banks and a multilevel log."""
    people({"al": ["CONSULTANT"]})
    cat.objects.add_schema(admin, "s", {"fields": {"x": "long"}})
    for stream in ("bank_a", "bank_b", "messages", "news"):
        cat.objects.add_stream(admin, stream, "s")
    cat.levels.add_class(admin, "banks")
    cat.levels.add_class(admin, "oil")
    for coi, company in (("banks", "A"), ("banks", "B"), ("oil", "X"), ("oil", "Y")):
        cat.levels.add_company(admin, coi, company)
    cat.levels.set_stream(admin, "bank_a", "A")
    cat.levels.set_stream(admin, "bank_b", "B")
    cat.levels.set_stream(admin, "messages", None, multilevel=True)
    return cat


def _stream_id(cat, name):
    return cat.core.snapshot.stored(ObjectType.STREAM, name).id


def test_the_configuration_reads_back_by_name(walls, admin):
    walls.levels.set_clearance(admin, "CONSULTANT", {"banks": "A", "oil": "T"})
    walls.levels.set_organisation(admin, "al", "Y")
    assert walls.levels.configuration(admin) == {
        "classes": [
            {"name": "banks", "companies": ["A", "B"]},
            {"name": "oil", "companies": ["X", "Y"]},
        ],
        "streams": {
            "bank_a": {"company": "A"},
            "bank_b": {"company": "B"},
            "messages": {"multilevel": True},
        },
        "organisations": {"al": "Y"},
        "clearances": {"CONSULTANT": {"banks": "A", "oil": "T"}},
    }


def test_a_clearance_becomes_the_mask_of_the_companies_it_covers(walls, admin):
    walls.levels.set_clearance(admin, "CONSULTANT", {"banks": "A", "oil": "T"})
    policy = walls.core.snapshot.levels
    bits = policy.lattice.bits
    assert policy.clearance({"CONSULTANT"}) == 1 << bits["A"] | 1 << bits["X"] | 1 << bits["Y"]
    assert policy.clearance({"NOBODY"}) == PUBLIC
    assert policy.dominates(policy.clearance({"CONSULTANT"}), 1 << bits["A"]).allowed
    assert not policy.dominates(policy.clearance({"CONSULTANT"}), 1 << bits["B"]).allowed
    walls.levels.set_clearance(admin, "CONSULTANT", {})
    assert walls.core.snapshot.levels.clearance({"CONSULTANT"}) == PUBLIC


def test_a_tuple_level_comes_from_the_stream_or_the_senders_organisation(walls, admin):
    snapshot = walls.core.snapshot
    al = snapshot.users_by_name["al"]
    policy = snapshot.levels
    bits = policy.lattice.bits
    assert policy.admission(_stream_id(walls, "bank_b"), al.id, 0).level(0) == 1 << bits["B"]
    assert policy.admission(_stream_id(walls, "news"), al.id, 0).level(0) == PUBLIC
    with pytest.raises(SluiceError) as refused:
        policy.admission(_stream_id(walls, "messages"), al.id, 0).level(0)
    assert refused.value.code == codes.LEVEL_NO_ORGANISATION
    walls.levels.set_organisation(admin, "al", "X")
    policy = walls.core.snapshot.levels
    assert policy.admission(_stream_id(walls, "messages"), al.id, 0).level(0) == 1 << bits["X"]


def test_a_multilevel_tuple_states_a_level_its_sender_is_cleared_for(walls, admin):
    """001's trusted stream: each tuple carries its level, one the sender's clearance (or
    its own organisation) dominates; public needs no clearance at all."""
    walls.levels.set_organisation(admin, "al", "X")
    policy = walls.core.snapshot.levels
    a, b, x = (policy.lattice.company_mask(c) for c in "ABX")
    al = walls.core.snapshot.users_by_name["al"].id
    sending = policy.admission(_stream_id(walls, "messages"), al, clearance=a)
    assert sending.level(0, {}) == PUBLIC
    assert sending.level(1, "[A, X]") == sending.level(2, {"banks": "A", "oil": "X"}) == a | x
    assert sending.level(3, "[oil: X]") == x  # its organisation, stated
    refusals = [
        (codes.LEVEL_NOT_CLEARED, "[B, ⊥]"),
        (codes.LEVEL_BAD_SHAPE, 3),
        (codes.LEVEL_BAD_SHAPE, "[A]"),  # one entry for two classes
        (codes.LEVEL_BAD_SHAPE, "A, X"),
        (codes.LEVEL_BAD_SHAPE, "[banks: A, X]"),  # named and by position
        (codes.LEVEL_BAD_SHAPE, {"cars": "T"}),
        (codes.LEVEL_UNKNOWN_COMPANY, {"banks": "X"}),
    ]
    for code, stated in refusals:
        with pytest.raises(SluiceError) as refused:
            sending.level(7, stated)
        assert (refused.value.code, refused.value.details) == (code, {"tuple": 7}), stated
    with pytest.raises(SluiceError) as refused:  # a company stream's tuples are its company's
        policy.admission(_stream_id(walls, "bank_a"), al, a).level(0, "[A, ⊥]")
    assert refused.value.code == codes.LEVEL_NOT_MULTILEVEL
    assert b & sending.ceiling == 0


def test_a_session_is_cleared_by_the_union_of_its_active_roles(walls, admin, people):
    """As a session's readable set is the union of its roles' READ_TUPLE sources, its
    clearance is the union of its roles' clearances (docs/levels.md)."""
    people({"bo": ["BANKER", "DRILLER"]})
    walls.levels.set_clearance(admin, "BANKER", {"banks": "A"})
    walls.levels.set_clearance(admin, "DRILLER", {"oil": "X"})
    policy = walls.core.snapshot.levels
    a, x = policy.lattice.company_mask("A"), policy.lattice.company_mask("X")
    assert policy.clearance({"BANKER", "DRILLER"}) == a | x
    assert policy.dominates(policy.clearance({"BANKER", "DRILLER"}), a | x).allowed
    assert not policy.dominates(policy.clearance({"BANKER"}), a | x).allowed


@pytest.mark.parametrize(
    ("level", "code"),
    [
        ({"banks": "X"}, codes.LEVEL_UNKNOWN_COMPANY),  # complementing interest: X is oil
        ({"cars": "T"}, codes.LEVEL_BAD_SHAPE),
        ({"banks": "Z"}, codes.LEVEL_UNKNOWN_COMPANY),
    ],
)
def test_a_clearance_names_companies_of_their_own_class(walls, admin, level, code):
    with pytest.raises(SluiceError) as refused:
        walls.levels.set_clearance(admin, "CONSULTANT", level)
    assert refused.value.code == code
    assert walls.levels.configuration(admin)["clearances"] == {}


def test_company_bits_are_never_reused(walls, admin):
    bits = dict(walls.core.snapshot.levels.lattice.bits)
    walls.levels.add_company(admin, "oil", "Z")
    walls.levels.drop_company(admin, "Z")
    walls.levels.add_company(admin, "oil", "W")
    assert walls.core.snapshot.levels.lattice.bits["W"] == max(bits.values()) + 2


@pytest.mark.parametrize(
    ("change", "code"),
    [
        (lambda c, a: c.levels.drop_company(a, "A"), codes.LEVEL_IN_USE),
        (lambda c, a: c.levels.drop_class(a, "banks"), codes.LEVEL_IN_USE),
        (lambda c, a: c.levels.drop_company(a, "nobody"), codes.LEVEL_UNKNOWN),
        (lambda c, a: c.levels.add_company(a, "cars", "C"), codes.LEVEL_UNKNOWN),
        (lambda c, a: c.levels.add_company(a, "oil", "A"), codes.DUPLICATE_NAME),
        (lambda c, a: c.levels.add_company(a, "oil", "T"), codes.LEVEL_BAD_CLASSES),
        (lambda c, a: c.levels.add_class(a, "banks"), codes.DUPLICATE_NAME),
        (lambda c, a: c.levels.set_stream(a, "bank_a", "nobody"), codes.LEVEL_UNKNOWN),
        (lambda c, a: c.levels.set_organisation(a, "al", "nobody"), codes.LEVEL_UNKNOWN),
    ],
)
def test_refused_changes_leave_nothing(walls, admin, change, code):
    before = walls.levels.configuration(admin)
    with pytest.raises(SluiceError) as refused:
        change(walls, admin)
    assert refused.value.code == code
    assert walls.levels.configuration(admin) == before


def test_only_administrators_change_levels_and_the_refusal_is_audited(walls, admin, login):
    al = login("al")
    with pytest.raises(SluiceError) as refused:
        walls.levels.set_clearance(al, "CONSULTANT", {"banks": "T"})
    assert refused.value.code == codes.PERMISSION_DENIED
    assert walls.audit(admin, user="al")[0].allowed is False


def test_every_change_is_audited_with_old_and_new(walls, admin):
    walls.levels.set_clearance(admin, "CONSULTANT", {"banks": "A"})
    walls.levels.set_clearance(admin, "CONSULTANT", {"banks": "B"})
    entry = walls.audit(admin)[0]
    assert (entry.event, entry.object, entry.allowed) == ("levels", "role:CONSULTANT", True)
    assert entry.details["old"] == {"banks": "A"} and entry.details["new"] == {"banks": "B"}


def test_another_process_sees_a_lowered_clearance(walls, admin, db_url):
    other = Catalog.open(db_url, bcrypt_rounds=4)
    try:
        walls.levels.set_clearance(admin, "CONSULTANT", {"banks": "T"})
        other.core.store.settle()  # PostgreSQL's notice (SQLite's is there at once)
        assert other.core.snapshot.levels.clearance({"CONSULTANT"}) != PUBLIC
        walls.levels.set_clearance(admin, "CONSULTANT", {})
        other.core.store.settle()
        assert other.core.snapshot.levels.clearance({"CONSULTANT"}) == PUBLIC
    finally:
        other.close()


def test_dropping_a_stream_forgets_its_company(walls, admin):
    walls.objects.drop(admin, ObjectType.STREAM, "bank_b")
    assert "bank_b" not in walls.levels.configuration(admin)["streams"]
    walls.levels.drop_company(admin, "B")
