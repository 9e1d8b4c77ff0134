"""Every example of seed 003's sections 4-6, with the results the paper gives."""

from __future__ import annotations

from dataclasses import replace

import pytest
from paper003 import FIELDS, FIGURE_8B, ROLES, TID, readable, row

from boxes.cql import parse
from boxes.punctuations import Policy, Sp, Stamp, decide, from_cql, from_json, policy_from_cql
from boxes.punctuations import patterns as p
from boxes.punctuations.shield import SecurityShield, Tuple

ALL = {"s1": set(FIELDS["s1"]), "s2": set(FIELDS["s2"]), "s3": set(FIELDS["s3"])}


# Figure 5: the six pattern forms.
@pytest.mark.parametrize(
    "pattern, value, expected",
    [
        (p.NOTHING, "s1", False),
        (p.NOTHING, 120, False),
        (p.WILDCARD, "s1", True),
        (p.WILDCARD, 120, True),
        (p.const("s1"), "s1", True),
        (p.const("s1"), "s2", False),
        (p.const(120), 120, True),
        (p.const(120), "120", False),
        (p.exclusive(120, 133), 120, False),
        (p.exclusive(120, 133), 121, True),
        (p.exclusive(120, 133), 133, False),
        (p.inclusive(120, 133), 120, True),
        (p.inclusive(120, 133), 133, True),
        (p.inclusive(120, 133), 134, False),
        (p.inclusive(120, 133), 119.5, False),
        (p.members("s1", "s2", "s3"), "s3", True),
        (p.members("s1", "s2", "s3"), "s4", False),
    ],
)
def test_figure_5_patterns(pattern, value, expected):
    assert pattern.matches(value) is expected
    assert p.from_json(pattern.to_json()) == pattern


def test_figure_5_notation():
    shown = [
        x.notation()
        for x in (
            p.NOTHING,
            p.WILDCARD,
            p.const("c"),
            p.exclusive(1, 2),
            p.inclusive(1, 2),
            p.members("c1", "c2", "c3"),
        )
    ]
    assert shown == ["∅", "*", "c", "(1, 2)", "[1, 2]", "{c1, c2, c3}"]


# Section 4.1: the three restrictions, on the streams of Figure 6.
STREAM_LEVEL = Sp(streams=p.const("s1"), roles=p.const("C"), ts=1, sn=1)
TUPLE_LEVEL = Sp(tuples=p.inclusive(120, 133), roles=p.const("GP"), ts=1, sn=1)
ATTRIBUTE_LEVEL = Sp(
    streams=p.members("s1", "s2"),
    attributes=p.members("Temperature", "Beats_per_min"),
    roles=p.members("D", "ND"),
    ts=1,
    sn=1,
)


@pytest.mark.parametrize("patient", [120, 500])
def test_stream_level_only_cardiologists_query_heart_rate(patient):
    """⟨s1, *, * | C | +⟩: only C queries HeartRate (s1), every field of every patient."""
    assert STREAM_LEVEL.notation() == "⟨s1, *, * | C | + | F | 1 | 1⟩"
    assert readable((STREAM_LEVEL,), "s1", patient) == {"C": ALL["s1"]}
    assert readable((STREAM_LEVEL,), "s2", patient) == {}


@pytest.mark.parametrize("stream", ["s1", "s2", "s3"])
def test_tuple_level_general_physicians_see_patients_120_to_133(stream):
    """⟨*, [120, 133], * | GP | +⟩: GP reads tuples of patients 120-133 from any stream."""
    for patient in (120, 127, 133):
        assert readable((TUPLE_LEVEL,), stream, patient) == {"GP": ALL[stream]}
    for patient in (119, 134):
        assert readable((TUPLE_LEVEL,), stream, patient) == {}


def test_attribute_level_doctors_and_nurses_see_temperature_and_beats():
    """⟨{s1, s2}, *, {Temperature, Beats_per_min} | {D, ND} | +⟩."""
    assert readable((ATTRIBUTE_LEVEL,), "s1", 120) == {
        "D": {"Beats_per_min"},
        "ND": {"Beats_per_min"},
    }
    assert readable((ATTRIBUTE_LEVEL,), "s2", 120) == {"D": {"Temperature"}, "ND": {"Temperature"}}
    assert readable((ATTRIBUTE_LEVEL,), "s3", 120) == {}


def test_one_policy_of_the_three_restrictions():
    """The three sps as one policy (sn 1-3): each grants what it says, nobody more."""
    sps = tuple(
        replace(sp, sn=n) for n, sp in enumerate((STREAM_LEVEL, TUPLE_LEVEL, ATTRIBUTE_LEVEL), 1)
    )
    assert readable(sps, "s1", 125) == {
        "C": ALL["s1"],
        "GP": ALL["s1"],
        "D": {"Beats_per_min"},
        "ND": {"Beats_per_min"},
    }
    assert readable(sps, "s1", 200) == {
        "C": ALL["s1"],
        "D": {"Beats_per_min"},
        "ND": {"Beats_per_min"},
    }
    assert readable(sps, "s3", 200) == {}


def test_negative_sign_denies_what_a_positive_one_grants():
    """Definition 4.1: '-' denies the roles access to the objects; a denial wins."""
    deny_beats = Sp(
        streams=p.const("s1"),
        attributes=p.const("Beats_per_min"),
        roles=p.const("C"),
        positive=False,
        ts=1,
        sn=2,
    )
    assert readable((STREAM_LEVEL, deny_beats), "s1", 120) == {"C": {"Patient_id", "Timestamp"}}


# Section 4.3, Figure 8a: CQL's INSERT SP.
FIGURE_8A = """INSERT SP AS sp1
INTO STREAM s3
LET
sp1.DDP = TUPLES:[120, 200]
AND ATTRIBUTES:Frequency,
sp1.SRP = frbac:R1 WITH GRANT OPTION,
sp1.SIGN = POSITIVE,
sp1.IMMUTABLE = TRUE"""


def test_figure_8a_insert_sp():
    """⟨s3, [120, 200], Frequency | R1^G | + | T⟩: R1 reads breathing frequency of patients
    120-200 and may delegate it."""
    (statement,) = parse(FIGURE_8A).punctuations
    sp = from_cql(statement, ts=5, sn=1)
    assert sp.notation() == "⟨s3, [120, 200], Frequency | R1^G | + | T | 5 | 1⟩"
    assert sp.immutable and sp.grant and sp.positive
    assert readable((sp,), "s3", 120) == {"R1": {"Frequency"}}
    assert readable((sp,), "s3", 200) == {"R1": {"Frequency"}}
    assert readable((sp,), "s3", 201) == {}
    assert readable((sp,), "s1", 150) == {}


def test_figure_8b_sp_on_results():
    """ON RESULT's sp names no stream: it is the query's output's."""
    (statement,) = parse(FIGURE_8B).queries[0].on_result
    sp = from_cql(statement, ts=9, sn=1, stream="out")
    assert sp.notation() == "⟨out, *, * | Cardiologist | + | T | 9 | 1⟩"


def test_figure_7_defaults_and_the_long_keyword():
    """SIGN and IMMUTABLE are optional (positive, mutable); SECURITY PUNCTUATION = SP."""
    text = (
        "INSERT SECURITY PUNCTUATION INTO STREAM s1 LET "
        "DDP = ATTRIBUTES:(Beats_per_min, Timestamp), SRP = rbac:D; "
        "INSERT SP INTO STREAM s1 LET DDP = TUPLES:ALL, SRP = frbac:C, SIGN = NEGATIVE"
    )
    first, second = policy_from_cql(parse(text).punctuations, ts=3)
    assert first.notation() == "⟨s1, *, {Beats_per_min, Timestamp} | D | + | F | 3 | 1⟩"
    assert second.notation() == "⟨s1, *, * | C | - | F | 3 | 2⟩"


# Section 4, "Applicability" and Figure 10: sps precede the tuples they govern.
def shield(apr, pff=True):
    def roles(policy, t):
        label = decide(policy, t.stream, t.values, FIELDS[t.stream], ROLES, TID)
        return frozenset(n for n, b in ROLES.items() if label.mask >> b & 1)

    return SecurityShield(apr, roles, pff)


def sp(roles, ts, sn, **kw):
    return Sp(roles=p.members(*roles), ts=ts, sn=sn, **kw)


def tup(patient, ts, csn, stream="s1"):
    return Tuple(stream, row(stream, patient), Stamp(ts, csn))


def run(ss, items):
    return [out for item in items for out in ss.push(item)]


def test_figure_10_policy_then_segment():
    """Lines 1-2 and 7-14: the policy's sps, then its tuples; the policy goes out once, before
    the first tuple; PFF false keeps it back."""
    a, b = sp(["D"], 10, 1), sp(["ND"], 10, 2)
    t1, t2 = tup(120, 10, 2), tup(121, 10, 2)
    assert run(shield({"D"}), [a, b, t1, t2]) == [a, b, t1, t2]
    assert run(shield({"D"}, pff=False), [a, b, t1, t2]) == [t1, t2]


def test_figure_10_line_6_no_policy_no_tuple():
    assert run(shield({"D"}), [tup(120, 10, 1)]) == []


def test_figure_10_line_15_roles_do_not_meet():
    assert run(shield({"GP"}), [sp(["D"], 10, 1), tup(120, 10, 1)]) == []


def test_theorem_5_1_case_1a_complete_policy():
    """P complete (csn 3 = the tuple's): P then t go out, P once; later tuples alone."""
    sps = [sp(["D"], 10, n) for n in (1, 2, 3)]
    ts = [tup(120 + i, 10, 3) for i in range(3)]
    assert run(shield({"D"}), [*sps, *ts]) == [*sps, *ts]


def test_theorem_5_1_case_1b_incomplete_policy():
    """sp 2 missing: csn is 1, the tuple says 3: P and t discarded, and the rest of the segment."""
    items = [sp(["D"], 10, 1), sp(["D"], 10, 3), tup(120, 10, 3), tup(121, 10, 3)]
    assert run(shield({"D"}), items) == []


def test_theorem_5_1_case_2_tuple_before_its_policy():
    """t names a newer policy than L.CP: L.CP and t discarded; when t's policy P arrives later
    it is discarded too, also though L.CP was emptied (docs/punctuations.md, choice 1)."""
    old = sp(["D"], 10, 1)
    early = tup(120, 20, 1)
    late = sp(["D"], 20, 1)
    assert run(shield({"D"}), [old, tup(120, 10, 1), early, late, tup(121, 20, 1)]) == [
        old,
        tup(120, 10, 1),
    ]


def test_theorem_5_1_case_3_a_newer_policy_overrides():
    """P' (newer) right after P: P dropped, P' governs; it is propagated in its turn."""
    p1, p2 = sp(["D"], 10, 1), sp(["ND"], 11, 1)
    assert run(shield({"D"}), [p1, p2, tup(120, 11, 1)]) == []
    assert run(shield({"ND"}), [p1, p2, tup(120, 11, 1)]) == [p2, tup(120, 11, 1)]
    t1, t2 = tup(120, 10, 1), tup(121, 11, 1)
    assert run(shield({"D", "ND"}), [p1, t1, p2, t2]) == [p1, t1, p2, t2]


def test_figure_10_line_4_an_older_sp_is_discarded():
    p2, p1 = sp(["ND"], 11, 1), sp(["D"], 10, 1)
    assert run(shield({"D", "ND"}), [p2, p1, tup(120, 11, 1)]) == [p2, tup(120, 11, 1)]
    assert run(shield({"D", "ND"}), [p2, p1, tup(120, 10, 1)]) == []


def test_policy_goes_before_the_first_tuple_that_passes():
    """Figure 10's policy_sent (choice 6): the segment's first tuple filtered, the policy still
    precedes the first one that passes."""
    pol = sp(["GP"], 10, 1, tuples=p.inclusive(120, 133))
    hidden, shown = tup(200, 10, 1), tup(125, 10, 1)
    assert run(shield({"GP"}), [pol, hidden, shown, tup(126, 10, 1)]) == [
        pol,
        shown,
        tup(126, 10, 1),
    ]


@pytest.mark.parametrize("ratio", [1, 10, 100])
@pytest.mark.parametrize("apr_size", [1, 500])
def test_section_6_setting_half_the_tuples_filtered(ratio, apr_size):
    """Figure 13's set-up: tuples per sp from 1 to 100, APR of 1 to 500 roles, about half the
    tuples filtered; each passing policy propagated exactly once."""
    roles = {f"r{i}": i for i in range(max(apr_size, 2))}
    apr = {f"r{i}" for i in range(apr_size)}

    def granted(policy, t):
        return frozenset(n for n, b in roles.items() if policy.sps[0].roles.matches(n))

    ss = SecurityShield(apr, granted)
    out, policies = [], 20
    for k in range(policies):
        role = (
            "r0" if k % 2 == 0 else f"r{max(apr_size, 2) + 1}"
        )  # every other policy: nobody in APR
        out += ss.push(Sp(roles=p.const(role), ts=k + 1, sn=1))
        for i in range(ratio):
            out += ss.push(Tuple("s1", {"Patient_id": i}, Stamp(k + 1, 1)))
    tuples = [x for x in out if isinstance(x, Tuple)]
    assert len(tuples) == policies * ratio // 2
    assert len([x for x in out if isinstance(x, Sp)]) == policies // 2


def test_json_form_reads_back_to_the_same_sp():
    for sp_ in (STREAM_LEVEL, TUPLE_LEVEL, ATTRIBUTE_LEVEL):
        assert from_json(sp_.to_json()) == sp_


# Section 4.2: server-side policies refine the provider's by intersection, unless immutable.
DOCTORS_AND_CARDIOLOGISTS = Sp(streams=p.const("s1"), roles=p.members("C", "D"), ts=1, sn=1)
SERVER_ONLY_C = Sp(roles=p.const("C"), ts=1, sn=1)


def readable_with_server(provider, server, stream="s1", patient=120, union=False):
    label = decide(
        Policy(1, provider),
        stream,
        row(stream, patient),
        FIELDS[stream],
        ROLES,
        TID,
        Policy(1, server),
        union,
    )
    return {n for n, b in ROLES.items() if label.mask >> b & 1}


def test_intersect_a_server_policy_narrows_a_mutable_sp():
    """match(t, intersect(sp1, sp2)) iff match(t, sp1) and match(t, sp2)."""
    assert readable_with_server((DOCTORS_AND_CARDIOLOGISTS,), (SERVER_ONLY_C,)) == {"C"}
    reversed_ = ((SERVER_ONLY_C,), (DOCTORS_AND_CARDIOLOGISTS,))
    assert readable_with_server(*reversed_) == {"C"}
    assert readable_with_server(*reversed_, stream="s2") == set()  # the server's is for s1


def test_union_a_server_policy_widens_a_mutable_sp():
    """match(t, union(sp1, sp2)) iff match(t, sp1) or match(t, sp2): access grows with the
    server's sps; an immutable sp's field still ignores them, and a denial still holds."""
    doctors = Sp(streams=p.const("s1"), roles=p.const("D"), ts=1, sn=1)
    assert readable_with_server((doctors,), (SERVER_ONLY_C,), union=True) == {"C", "D"}
    assert readable_with_server((doctors,), (SERVER_ONLY_C,)) == set()  # intersect: none
    assert readable_with_server((), (SERVER_ONLY_C,), union=True) == {"C"}  # provider silent
    assert readable_with_server((doctors,), (), union=True) == {"D"}  # a server granting none
    immutable = replace(doctors, immutable=True)
    assert readable_with_server((immutable,), (SERVER_ONLY_C,), union=True) == {"D"}
    no_c = Sp(roles=p.const("C"), positive=False, ts=1, sn=2)
    assert readable_with_server((doctors, no_c), (SERVER_ONLY_C,), union=True) == {"D"}


def test_an_immutable_sp_ignores_the_server():
    """Immutable = T: the server-side policies are ignored (Figure 8a's sp is immutable)."""
    immutable = replace(DOCTORS_AND_CARDIOLOGISTS, immutable=True)
    assert readable_with_server((immutable,), (SERVER_ONLY_C,)) == {"C", "D"}
    (statement,) = parse(FIGURE_8A).punctuations
    sp_ = from_cql(statement, ts=1, sn=1)
    assert readable_with_server((sp_,), (), "s3") == {"R1"}  # a server policy granting nobody
