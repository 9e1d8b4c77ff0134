"""Role masks and field masks: deny by default, bits only for the catalog's roles."""

from __future__ import annotations

from dataclasses import replace

from boxes.punctuations import Decider, Policy, Sp, SpsAt, Stamps, TupleLabel, active_mask, decide
from boxes.punctuations import patterns as p

ROLES = {"C": 0, "D": 1, "ND": 5, "R70": 70}  # bits as the catalog gives them, past 64 too
FIELDS = ("Patient_id", "Beats_per_min")
ROW = {"Patient_id": 125, "Beats_per_min": 70}


def test_no_policy_is_nobody():
    assert decide(None, "s1", ROW, FIELDS, ROLES) == TupleLabel(0, (0, 0))
    assert decide(Policy(1, ()), "s1", ROW, FIELDS, ROLES) == TupleLabel(0, (0, 0))


def test_roles_are_the_catalogs_bits():
    everyone = Sp(roles=p.WILDCARD, ts=1, sn=1)
    mask = 1 | 1 << 1 | 1 << 5 | 1 << 70
    assert decide(Policy(1, (everyone,)), "s1", ROW, FIELDS, ROLES) == TupleLabel(
        mask, (mask, mask)
    )
    stranger = Sp(roles=p.members("Insurer", "C"), ts=1, sn=1)  # a role the catalog lacks: nothing
    assert decide(Policy(1, (stranger,)), "s1", ROW, FIELDS, ROLES).mask == 1


def test_a_stream_the_sp_does_not_name_gets_nothing():
    sp = Sp(streams=p.const("s2"), roles=p.WILDCARD, ts=1, sn=1)
    assert decide(Policy(1, (sp,)), "s1", ROW, FIELDS, ROLES).mask == 0


def test_unknown_identifier_grants_nothing_by_tuple_pattern():
    sp = Sp(tuples=p.inclusive(120, 130), roles=p.const("D"), ts=1, sn=1)
    assert decide(Policy(1, (sp,)), "s1", ROW, FIELDS, ROLES, "Patient_id").mask == 1 << 1
    assert decide(Policy(1, (sp,)), "s1", ROW, FIELDS, ROLES).mask == 0
    assert decide(Policy(1, (sp,)), "s1", ROW, FIELDS, ROLES, "patient").mask == 0


def test_a_compiled_policy_decides_per_tuple():
    sps = (
        Sp(roles=p.const("C"), ts=1, sn=1),
        Sp(
            tuples=p.exclusive(120, 130),
            attributes=p.const("Beats_per_min"),
            roles=p.const("D"),
            ts=1,
            sn=2,
        ),
    )
    decider = Decider(Policy(1, sps), "s1", FIELDS, ROLES, "Patient_id")
    assert decider({"Patient_id": 125, "Beats_per_min": 1}) == TupleLabel(0b11, (0b01, 0b11))
    assert decider({"Patient_id": 130, "Beats_per_min": 1}) == TupleLabel(0b01, (0b01, 0b01))


def test_active_roles():
    assert active_mask({"D", "R70", "Insurer"}, ROLES) == 1 << 1 | 1 << 70
    assert active_mask((), ROLES) == 0


def test_a_batch_is_labelled_as_its_tuples():
    """``Deciders.labels``: each tuple as its policy labels it alone; the identifiers are read
    only when a policy has a tuple pattern; a denied tuple gets nobody."""
    from boxes.punctuations import EMPTY, Deciders, admit_batch

    by_id = Sp(tuples=p.members(120, 125), roles=p.const("D"), ts=1, sn=1)
    everyone = Sp(roles=p.WILDCARD, ts=1, sn=2)
    tids = [119, 120, 125, None, 120]
    nobody = Decider(None, "s1", FIELDS, ROLES).at(None)

    def unread():
        raise AssertionError("identifiers read under a policy with no tuple pattern")

    for some in ((by_id,), (everyone,), (by_id, everyone)):
        sps = tuple(replace(sp, sn=n) for n, sp in enumerate(some, start=1))
        policy = Policy(1, sps)
        decider = Decider(policy, "s1", FIELDS, ROLES, "Patient_id")
        _, admitted = admit_batch(
            EMPTY, Stamps.of([policy.stamp] * 4 + [None]), SpsAt.of([(0, sps)])
        )
        deciders = Deciders("s1", FIELDS, ROLES, "Patient_id")
        one_by_one = [decider({"Patient_id": t, "Beats_per_min": 1}) for t in tids[:4]]
        assert deciders.labels(admitted, lambda: tids) == [*one_by_one, nobody]
        assert deciders.labels(admitted) == [decider.at(None)] * 4 + [nobody]
        if decider.constant is not None:
            assert deciders.labels(admitted, unread) == [*one_by_one, nobody]
    assert Decider(Policy(1, (everyone,)), "s1", FIELDS, ROLES).constant is not None
    assert Decider(Policy(1, (by_id,)), "s1", FIELDS, ROLES).constant is None


def test_a_policy_sent_again_with_a_new_timestamp_is_compiled_once():
    from boxes.punctuations import Deciders

    deciders = Deciders("s1", ("a", "b"), {"C": 0, "D": 1})
    first = Policy(1, (Sp(roles=p.const("C"), ts=1, sn=1), Sp(roles=p.const("D"), ts=1, sn=2)))
    again = Policy(7, (Sp(roles=p.const("D"), ts=7, sn=1), Sp(roles=p.const("C"), ts=7, sn=2)))
    other = Policy(8, (Sp(roles=p.const("C"), ts=8, sn=1, positive=False),))
    assert deciders(first) is deciders(again)
    assert deciders(other) is not deciders(first)
    assert deciders(again).at(None) == TupleLabel(3, (3, 3))
    assert deciders(other).at(None) == TupleLabel(0, (0, 0))
    assert deciders(None).at(None) == TupleLabel(0, (0, 0))
