"""The sp's JSON and CQL forms: what is accepted, and SP_INVALID naming the part for the rest."""

from __future__ import annotations

from dataclasses import replace

import pytest

from boxes import codes
from boxes.canonical import canonical
from boxes.cql import parse
from boxes.errors import InvalidInput
from boxes.punctuations import from_cql, from_json
from boxes.punctuations import patterns as p
from boxes.punctuations.model import MAX_CONTENTS, MAX_NUMBERED_VALUES, MAX_SN, stamp_from_json

GOOD = {"ddp": {}, "srp": "D", "ts": 1, "sn": 1}


def test_defaults_are_the_whole_stream_positive_mutable():
    sp = from_json(GOOD)
    assert (sp.streams, sp.tuples, sp.attributes) == (p.WILDCARD,) * 3
    assert (sp.roles, sp.positive, sp.immutable, sp.grant) == (p.const("D"), True, False, False)


@pytest.mark.parametrize(
    "change, part",
    [
        ({"extra": 1}, "extra"),
        ({"ddp": None}, "ddp"),
        ({"ddp": {"rows": "*"}}, "ddp"),
        ({"ddp": {"tuples": {"inclusive": [133, 120]}}}, "ddp.tuples"),
        ({"ddp": {"tuples": {"inclusive": ["a", "b"]}}}, "ddp.tuples"),
        ({"ddp": {"tuples": {"inclusive": [1, 2], "exclusive": [1, 2]}}}, "ddp.tuples"),
        ({"ddp": {"tuples": {"between": [1, 2]}}}, "ddp.tuples"),
        ({"ddp": {"tuples": {"inclusive": [1]}}}, "ddp.tuples"),
        ({"ddp": {"tuples": {"exclusive": [1, float("nan")]}}}, "ddp.tuples"),
        ({"ddp": {"streams": True}}, "ddp.streams"),
        ({"ddp": {"streams": ""}}, "ddp.streams"),
        ({"ddp": {"streams": "x" * 257}}, "ddp.streams"),
        ({"ddp": {"attributes": [["a"]]}}, "ddp.attributes"),
        ({"ddp": {"attributes": list(range(p.MAX_MEMBERS + 1))}}, "ddp.attributes"),
        ({"srp": None}, "srp"),
        ({"sign": "positive"}, "sign"),
        ({"immutable": "true"}, "immutable"),
        ({"grant": 1}, "grant"),
        ({"ts": 0}, "ts"),
        ({"ts": True}, "ts"),
        ({"ts": 1.0}, "ts"),
        ({"ts": 1 << 63}, "ts"),
        ({"sn": 0}, "sn"),
        ({"sn": MAX_SN + 1}, "sn"),
    ],
)
def test_refused_with_the_part_named(change, part):
    with pytest.raises(InvalidInput) as err:
        from_json({**GOOD, **change})
    assert err.value.code == codes.SP_INVALID
    assert err.value.message.startswith(f"security punctuation, {part}:")


@pytest.mark.parametrize("missing", ["ddp", "srp", "ts", "sn"])
def test_required_parts(missing):
    item = {k: v for k, v in GOOD.items() if k != missing}
    with pytest.raises(InvalidInput, match=f"{missing}: is required"):
        from_json(item)


@pytest.mark.parametrize("item", [None, [], "sp"])
def test_an_sp_is_an_object(item):
    with pytest.raises(InvalidInput) as err:
        from_json(item)
    assert err.value.code == codes.SP_INVALID


def test_stamps():
    assert stamp_from_json({"ts": 5, "csn": 2}).csn == 2
    for bad in ({"ts": 5}, {"ts": 5, "csn": 0}, {"ts": 5, "csn": 1, "x": 1}, [5, 1]):
        with pytest.raises(InvalidInput):
            stamp_from_json(bad)


def test_cql_needs_a_stream_and_rbac():
    no_stream = parse(
        "SELECT a FROM s ON RESULT (INSERT SP INTO STREAM LET DDP = TUPLES:ALL, SRP = rbac:D)"
    )
    with pytest.raises(InvalidInput, match=r"stream: line 1, column 28: INTO STREAM names no"):
        from_cql(no_stream.queries[0].on_result[0], ts=1, sn=1)
    (dac,) = parse("INSERT SP INTO STREAM s LET DDP = TUPLES:ALL, SRP = dac:D").punctuations
    with pytest.raises(InvalidInput, match="the access control model is RBAC, not dac"):
        from_cql(dac, ts=1, sn=1)
    with pytest.raises(InvalidInput, match="ts: is an integer"):
        from_cql(parse("INSERT SP INTO STREAM s LET SRP = rbac:D").punctuations[0], ts=0, sn=1)


def test_sps_of_equal_content_share_a_number_and_others_never_do():
    """``Sp.content_id``: the shield groups policies by it, so two contents with one number
    would give one policy's label to the other's tuples."""
    a = from_json({**GOOD, "srp": ["D", "N"], "ts": 5, "sn": 1})
    again = from_json({**GOOD, "srp": ["D", "N"], "ts": 9, "sn": 2})
    assert a.content_id == again.content_id  # equal patterns, other objects, ts and sn
    others = [
        {**GOOD, "srp": ["D"]},
        {**GOOD, "srp": ["D", "N"], "sign": "-"},
        {**GOOD, "srp": ["D", "N"], "grant": True},
        {**GOOD, "srp": ["D", "N"], "immutable": True},
        {**GOOD, "srp": ["D", "N"], "ddp": {"attributes": "bpm"}},
        {**GOOD, "srp": ["D", "N"], "ddp": {"tuples": {"inclusive": [1, 2]}}},
        {**GOOD, "srp": ["D", "N"], "ddp": {"streams": "s2"}},
    ]
    numbers = [from_json(o).content_id for o in others]
    assert len({a.content_id, *numbers}) == len(others) + 1


def test_numbering_stays_sound_past_its_bounds():
    """Past ``MAX_CONTENTS`` the table starts again and a large pattern is not kept: a content
    may then get a second number, never another content's."""
    first = from_json({**GOOD, "srp": "R0"})
    for i in range(1, MAX_CONTENTS + 1):
        from_json({**GOOD, "srp": f"R{i}"})
    later = from_json({**GOOD, "srp": "R0"})
    assert later.content_id != first.content_id  # renumbered, which only costs a compile
    assert later.content_id == from_json({**GOOD, "srp": "R0"}).content_id
    many = [f"R{i}" for i in range(MAX_NUMBERED_VALUES + 1)]
    big = [from_json({**GOOD, "srp": many}) for _ in range(2)]
    assert big[0].content_id != big[1].content_id
    seen = {first.content_id, later.content_id, *(b.content_id for b in big)}
    assert len(seen) == 4


def test_an_sps_number_is_no_part_of_its_canonical_form():
    """A plan's fingerprint reads an ``ON RESULT`` policy's sps through ``canonical``: a
    number of this process in it would give the plan another checkpoint after a restart."""
    sp = from_json({**GOOD, "srp": ["D", "N"]})
    form = canonical(sp)
    assert "content_id" not in form and form["roles"] == canonical(p.members("D", "N"))
    assert canonical(replace(sp, grant=True)) != form
