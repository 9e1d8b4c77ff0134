"""Security punctuations in the catalog: role bits never given twice, governed streams, audit."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import IntegrityError

from boxes import codes
from boxes.errors import SluiceError
from catalog import DiagramSpec
from catalog.model import Action, ObjectType
from catalog.punctuations import role_words_of
from catalog.repository import MAX_ROLE_BITS
from tests.catalog.conftest import sql


@pytest.fixture
def ward(cat, admin, people):
    """Stream ``vitals`` owned by WARD (nurse ann may write it), read by DOCTOR."""
    people({"ann": ["WARD"], "dan": ["DOCTOR"]})
    cat.objects.add_schema(admin, "v", {"fields": {"patient": "long", "bpm": "long"}})
    cat.objects.add_stream(admin, "vitals", "v")
    cat.grants.grant(admin, "DOCTOR", Action.VIEW_OBJECT, ObjectType.STREAM, "vitals")
    cat.grants.grant(admin, "ADMIN", Action.READ_TUPLE, ObjectType.STREAM, "vitals")
    cat.objects.transfer(admin, ObjectType.STREAM, "vitals", "WARD")
    return cat


def test_each_role_gets_the_next_bit_and_a_dropped_roles_bit_is_not_given_again(cat, admin):
    bits = cat.core.snapshot.role_bits
    assert bits == {"ADMIN": 0}
    cat.accounts.add_role(admin, "DOCTOR")
    cat.accounts.add_role(admin, "NURSE")
    assert dict(cat.core.snapshot.role_bits) == {"ADMIN": 0, "DOCTOR": 1, "NURSE": 2}
    cat.accounts.delete_role(admin, "DOCTOR")
    cat.accounts.add_role(admin, "DOCTOR")
    assert dict(cat.core.snapshot.role_bits) == {"ADMIN": 0, "NURSE": 2, "DOCTOR": 3}


def test_roles_past_the_64th_get_bits_and_past_the_last_none(cat, admin):
    for n in range(1, 131):
        cat.accounts.add_role(admin, f"R{n}")
    bits = cat.core.snapshot.role_bits
    assert [bits[f"R{n}"] for n in (63, 64, 100, 129, 130)] == [63, 64, 100, 129, 130]
    assert role_words_of(cat.core.snapshot) == 3  # bits 0-130
    with cat.core.store.transaction() as conn:
        sql(conn, "UPDATE counters SET value = :v WHERE name = 'role_bit'", v=MAX_ROLE_BITS - 1)
    cat.accounts.add_role(admin, "LAST")
    cat.accounts.add_role(admin, "NONE")
    bits = cat.core.snapshot.role_bits
    assert bits["LAST"] == MAX_ROLE_BITS - 1 and "NONE" not in bits
    with pytest.raises(Exception) as refused, cat.core.store.transaction() as conn:
        sql(conn, "INSERT INTO role_bits (role, bit) VALUES ('NONE', :bit)", bit=MAX_ROLE_BITS)
    assert isinstance(refused.value, IntegrityError)


def test_the_owner_governs_a_stream_by_its_sps_and_names_its_identifier(ward, admin, login):
    ann, dan = login("ann"), login("dan")
    assert ward.punctuations.governance(ann, "vitals") == {"governed": False, "tid_field": None}
    assert ward.punctuations.set_governance(ann, "vitals", True, "patient") == {
        "governed": True,
        "tid_field": "patient",
    }
    stream = ward.core.snapshot.stored(ObjectType.STREAM, "vitals")
    assert ward.core.snapshot.governed == {stream.id: "patient"}
    assert ward.punctuations.governance(dan, "vitals")["governed"] is True
    entry = ward.audit(admin)[0]
    assert (entry.event, entry.object, entry.allowed) == ("punctuations", "stream:vitals", True)
    assert entry.details["old"] == {"governed": False, "tid_field": None}
    assert entry.details["new"] == {"governed": True, "tid_field": "patient"}
    ward.punctuations.set_governance(admin, "vitals", False)
    assert ward.core.snapshot.governed == {}


def test_a_reader_may_not_govern_and_the_refusal_is_audited(ward, admin, login):
    with pytest.raises(SluiceError) as refused:
        ward.punctuations.set_governance(login("dan"), "vitals", True)
    assert refused.value.code == codes.PERMISSION_DENIED
    assert ward.audit(admin, user="dan")[0].allowed is False
    assert ward.core.snapshot.governed == {}


@pytest.mark.parametrize(
    ("governed", "tid_field"), [(True, "nurse"), (False, "patient")], ids=["unknown", "ungoverned"]
)
def test_the_identifier_is_a_field_of_a_governed_stream(ward, admin, governed, tid_field):
    with pytest.raises(SluiceError) as refused:
        ward.punctuations.set_governance(admin, "vitals", governed, tid_field)
    assert refused.value.code == codes.SP_STREAM_INVALID
    assert ward.core.snapshot.governed == {}


def test_dropping_a_stream_forgets_that_it_was_governed(ward, admin):
    ward.punctuations.set_governance(admin, "vitals", True)
    ward.objects.drop(admin, ObjectType.STREAM, "vitals")
    assert ward.core.snapshot.governed == {}


def test_whether_sps_govern_a_stream_is_fixed_while_a_diagram_reads_it(ward, admin):
    ward.objects.add_diagram(admin, DiagramSpec("d0", ("vitals",), (), ("out",)))
    with pytest.raises(SluiceError) as refused:
        ward.punctuations.set_governance(admin, "vitals", True)
    assert refused.value.code == codes.SP_STREAM_IN_USE
    ward.punctuations.set_governance(admin, "vitals", False)  # no change: allowed
    ward.objects.drop(admin, ObjectType.DIAGRAM, "d0")
    ward.punctuations.set_governance(admin, "vitals", True)
    assert len(ward.core.snapshot.governed) == 1


def test_a_diagrams_role_words_are_recorded_replaced_and_dropped_with_it(ward, admin):
    ward.objects.add_diagram(admin, DiagramSpec("d0", ("vitals",), (), ("out",)))
    diagram = ward.core.snapshot.stored(ObjectType.DIAGRAM, "d0")
    assert ward.punctuations.role_words(diagram) is None  # deployed before they were kept
    ward.punctuations.record_role_words(diagram, 3)
    ward.punctuations.record_role_words(diagram, 4)  # deployed again, wider
    assert ward.punctuations.role_words(diagram) == 4
    ward.objects.drop(admin, ObjectType.DIAGRAM, "d0")
    with ward.core.store.reader() as reader:
        assert sql(reader, "SELECT count(*) FROM diagram_role_words").scalar() == 0
