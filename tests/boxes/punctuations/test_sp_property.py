"""The shield and the labels on random interleavings of sps and tuples (gaps, repeats,
conflicts, late policies, stray stamps) against plain readings of seed 003's text.

The shield's reference looks at the whole history before a tuple instead of keeping state:
the tuple is governed by the sps of its stamp's timestamp in the last run of sps before it,
iff that policy started after every older timestamp seen, nothing newer came during its run,
its sns are exactly 1..csn (one sp per sn), and every tuple since the run named it.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from boxes.punctuations import EMPTY, Sp, Stamp, admit_frame, admit_sp, admit_tuple, decide
from boxes.punctuations import patterns as p
from boxes.punctuations.shield import Policy

ROLE_NAMES = ("C", "D", "GP", "ND")
# bits either side of a word's edge and in a third word (more than 64 roles)
ROLES = dict(zip(ROLE_NAMES, (0, 63, 64, 129), strict=True))
FIELDS = ("Patient_id", "Beats_per_min", "Timestamp")


def patterns_(names):
    """Patterns of every form over ``names``, mostly ones that match something (a number or a
    name of no kind now and then)."""
    value = st.sampled_from((*names, *names, *names, 140, "nobody"))
    bounds = st.tuples(st.integers(118, 136), st.integers(0, 8))
    wildcard, const = st.just(p.WILDCARD), value.map(p.const)
    members = st.lists(value, min_size=1, max_size=3).map(lambda v: p.members(*v))
    return st.one_of(
        wildcard,
        const,
        members,
        wildcard,
        const,
        members,
        st.just(p.NOTHING),
        bounds.map(lambda b: p.inclusive(b[0], sum(b))),
        bounds.map(lambda b: p.exclusive(b[0], sum(b))),
    )


PATIENTS = tuple(range(118, 137))
sps = st.builds(
    lambda s, t, a, r, pos, ts, sn, imm: Sp(
        streams=s, tuples=t, attributes=a, roles=r, positive=pos, ts=ts, sn=sn, immutable=imm
    ),
    patterns_(("s1", "s2")),
    patterns_(PATIENTS),
    patterns_(FIELDS),
    patterns_(ROLE_NAMES),
    st.booleans(),
    st.integers(1, 3),
    st.sampled_from([1, 1, 2, 3]),
    st.booleans(),
)
stamps = st.one_of(st.none(), st.builds(Stamp, st.integers(1, 3), st.sampled_from([1, 1, 2, 3])))
histories = st.lists(st.one_of(sps, stamps), max_size=30)


def reference(items, i):
    """The sps governing the tuple at ``i`` by the text, or None (denied). A discarded sp, one
    that arrived after its time (Theorem 5.1: a timestamp as new or newer was seen before the
    run of sps of its timestamp it joins), leaves no trace: what governed before it still does."""
    kept: list = []
    for x in items[:i]:
        if isinstance(x, Sp):
            start = len(kept)
            while start > 0 and isinstance(kept[start - 1], Sp) and kept[start - 1].ts == x.ts:
                start -= 1
            seen = [y.ts for y in kept[:start] if y is not None]
            if seen and max(seen) >= x.ts:
                continue
        kept.append(x)
    return _governing([*kept, items[i]], len(kept))


def _governing(items, i):
    stamp = items[i]
    if stamp is None:
        return None
    j = i - 1
    while j >= 0 and not isinstance(items[j], Sp):
        if items[j] != stamp:
            return None  # a tuple of the segment named another policy: emptied
        j -= 1
    if j < 0:
        return None  # no policy before it
    start = j
    while start > 0 and isinstance(items[start - 1], Sp):
        start -= 1
    run = items[start : j + 1]
    mine = [k for k, sp in enumerate(run) if sp.ts == stamp.ts]
    if not mine:
        return None
    first = start + mine[0]
    seen = [x.ts for x in items[:first] if x is not None]
    if seen and max(seen) >= stamp.ts:
        return None  # arrived after its time: late
    if any(sp.ts > stamp.ts for sp in run[mine[0] :]):
        return None  # overridden by a newer policy
    policy = {run[k].sn: run[k] for k in mine}
    if len({run[k] for k in mine}) != len(policy):
        return None  # two different sps with one sn
    if sorted(policy) != list(range(1, stamp.csn + 1)):
        return None
    return tuple(policy[n] for n in sorted(policy))


D1, C1 = Sp(roles=p.const("D"), ts=1, sn=1), Sp(roles=p.const("C"), ts=1, sn=1)


@settings(max_examples=800, deadline=None)
@given(histories)
@example([D1, C1, Stamp(1, 1)])  # two different sps with one sn
@example([D1, D1, Stamp(1, 1), Stamp(1, 1)])  # the same sp twice
@example([D1, Sp(roles=p.const("C"), ts=1, sn=3), Stamp(1, 2)])  # an sp beyond a gap
@example([D1, Stamp(1, 1), Sp(roles=p.const("C"), ts=1, sn=2), Stamp(1, 2)])  # after sealing
@example([D1, Stamp(1, 1), Stamp(2, 1), Sp(roles=p.const("C"), ts=2, sn=1), Stamp(2, 1)])
@example([D1, Stamp(1, 1), D1, Stamp(1, 1)])  # a repeat after sealing is late; D1 still governs
def test_shield_matches_the_text(items):
    state = EMPTY
    for i, item in enumerate(items):
        if isinstance(item, Sp):
            state, _ = admit_sp(state, item)
            continue
        state, policy, _ = admit_tuple(state, item)
        expected = reference(items, i)
        assert (policy.sps if policy else None) == expected
        if policy is not None:  # never a policy that is not complete and named by the tuple
            assert policy.stamp == item and [s.sn for s in policy.sps] == list(
                range(1, item.csn + 1)
            )
            assert all(s in items[:i] for s in policy.sps)


@settings(max_examples=300, deadline=None)
@given(histories)
def test_a_frame_decides_as_its_tuples_one_by_one(items):
    """The writer's per-frame path: each maximal run of tuples between sps as one frame."""
    one, frame = EMPTY, EMPTY
    pending: list = []
    end = object()
    for item in [*items, end]:
        if isinstance(item, Sp) or item is end:
            frame, runs = admit_frame(frame, pending)
            by_frame = [r.policy for r in runs for _ in range(r.start, r.stop)]
            by_tuple = []
            for stamp in pending:
                one, policy, _ = admit_tuple(one, stamp)
                by_tuple.append(policy)
            assert by_frame == by_tuple and frame == one
            pending = []
            if isinstance(item, Sp):
                one, _ = admit_sp(one, item)
                frame, _ = admit_sp(frame, item)
        else:
            pending.append(item)


def reference_label(sps, stream, values, tid, server=None):
    """Role name -> fields it may read, by Definition 4.1 read sp by sp (a denial wins; an
    unknown identifier: a tuple pattern other than * grants nothing and denies), and section
    4.2: a mutable grant holds only where the server's policy, if any, grants too."""
    allowed = reference_label(server, stream, values, tid) if server is not None else None
    out = {}
    for role in ROLE_NAMES:
        fields = set()
        for f in FIELDS:

            def covers(sp, deny):
                if not (sp.streams.matches(stream) and sp.attributes.matches(f)):
                    return False
                if not sp.roles.matches(role):
                    return False
                if sp.tuples == p.WILDCARD:
                    return True
                return sp.tuples.matches(values[tid]) if tid else deny

            def refined(sp):
                return sp.immutable or allowed is None or f in allowed.get(role, ())

            if any(covers(s, False) and refined(s) for s in sps if s.positive) and not any(
                covers(s, True) for s in sps if not s.positive
            ):
                fields.add(f)
        if fields:
            out[role] = fields
    return out


GRANT_D = Sp(roles=p.const("D"), ts=1, sn=1)
DENY_D_SOME = Sp(roles=p.const("D"), tuples=p.inclusive(120, 130), positive=False, ts=1, sn=2)


@settings(max_examples=400, deadline=None)
@example([GRANT_D, DENY_D_SOME], "s1", 125, None, None)  # unknown identifier: the denial holds
@example([GRANT_D, DENY_D_SOME], "s1", 125, "Patient_id", None)
@example([GRANT_D, DENY_D_SOME], "s1", 131, "Patient_id", None)
@example([GRANT_D], "s1", 131, "Patient_id", [DENY_D_SOME])  # a server policy of denials only
@given(
    st.lists(sps, max_size=5),
    st.sampled_from(["s1", "s2"]),
    st.integers(118, 136),
    st.sampled_from([None, "Patient_id"]),
    st.one_of(st.none(), st.lists(sps, max_size=3)),
)
def test_labels_match_definition_4_1(policy_sps, stream, patient, tid, server_sps):
    values = {"Patient_id": patient, "Beats_per_min": 70, "Timestamp": "9:17"}
    server = Policy(1, tuple(server_sps)) if server_sps is not None else None
    label = decide(Policy(1, tuple(policy_sps)), stream, values, FIELDS, ROLES, tid, server)
    got = {}
    for role, bit in ROLES.items():
        fields = {f for f, m in zip(FIELDS, label.fields, strict=True) if m >> bit & 1}
        assert bool(fields) == bool(label.mask >> bit & 1)
        if fields:
            got[role] = fields
    assert got == reference_label(policy_sps, stream, values, tid, server_sps)
    known = sum(1 << bit for bit in ROLES.values())
    assert label.mask & ~known == 0  # no bit for a role the catalog does not know
