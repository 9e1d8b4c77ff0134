"""The shield and the labels on random interleavings of sps and tuples (gaps, repeats,
conflicts, late policies, stray stamps) against plain readings of seed 003's text.

The shield's reference looks at the whole history before a tuple instead of keeping state:
the tuple is governed by the sps of its stamp's timestamp in the last run of sps before it,
iff that policy started after every older timestamp seen, nothing newer came during its run,
its sns are exactly 1..csn (one sp per sn), and every tuple since the run named it.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import example, given, settings
from hypothesis import strategies as st

from boxes.punctuations import EMPTY, Deciders, Sp, SpsAt, Stamp, Stamps, admit_batch, decide
from boxes.punctuations import patterns as p
from boxes.punctuations.shield import Policy
from tests.boxes.punctuations import figure10

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


def batches(items, cuts):
    """``items`` cut before each index of ``cuts`` into batches as the writer gets them: the
    tuples' stamps and the runs of sps among them with the row each came before."""
    out, start = [], 0
    for stop in [*sorted(set(cuts)), len(items)]:
        stamps, sps_at = [], []
        for item in items[start:stop]:
            if isinstance(item, Sp):
                if sps_at and sps_at[-1][0] == len(stamps):
                    sps_at[-1][1].append(item)
                else:
                    sps_at.append((len(stamps), [item]))
            else:
                stamps.append(item)
        out.append((Stamps.of(stamps), SpsAt.of(sps_at)))
        start = stop
    return out


def by_batches(items, cuts, state=EMPTY):
    """Each tuple's policy and the state after each batch, ``admit_batch`` batch by batch."""
    policies, states = [], []
    for stamps, sps_at in batches(items, cuts):
        state, admitted = admit_batch(state, stamps, sps_at)
        policies += admitted.governing()
        states.append(state)
    return policies, states


def one_by_one(items, cuts, state=EMPTY):
    """The same by Figure 10 item by item (``figure10.py``, the path before batches)."""
    policies, states = [], []
    for stamps, sps_at in batches(items, cuts):
        for row in range(len(stamps) + 1):
            for at, sps in sps_at.runs():
                if at == row:
                    for sp in sps:
                        state, _ = figure10.admit_sp(state, sp)
            if row < len(stamps):
                state, policy, _ = figure10.admit_tuple(state, stamps[row])
                policies.append(policy)
        states.append(state)
    return policies, states


@settings(max_examples=800, deadline=None)
@given(histories)
@example([D1, C1, Stamp(1, 1)])  # two different sps with one sn
@example([D1, D1, Stamp(1, 1), Stamp(1, 1)])  # the same sp twice
@example([D1, Sp(roles=p.const("C"), ts=1, sn=3), Stamp(1, 2)])  # an sp beyond a gap
@example([D1, Stamp(1, 1), Sp(roles=p.const("C"), ts=1, sn=2), Stamp(1, 2)])  # after sealing
@example([D1, Stamp(1, 1), Stamp(2, 1), Sp(roles=p.const("C"), ts=2, sn=1), Stamp(2, 1)])
@example([D1, Stamp(1, 1), D1, Stamp(1, 1)])  # a repeat after sealing is late; D1 still governs
def test_shield_matches_the_text(items):
    """Item by item (a batch each) and as one batch alike."""
    one, _ = by_batches(items, range(len(items)))
    whole, _ = by_batches(items, [])
    tuples = [i for i, item in enumerate(items) if not isinstance(item, Sp)]
    assert one == whole
    for i, policy in zip(tuples, whole, strict=True):
        item = items[i]
        assert (policy.sps if policy else None) == reference(items, i)
        if policy is not None:  # never a policy that is not complete and named by the tuple
            assert policy.stamp == item and [s.sn for s in policy.sps] == list(
                range(1, item.csn + 1)
            )
            assert all(s in items[:i] for s in policy.sps)


open_batches = st.lists(st.integers(0, 30), max_size=6)


@settings(max_examples=800, deadline=None)
@given(histories, open_batches, histories)
@example([D1, D1, C1], [3], [Stamp(1, 1)])  # a conflict in an open batch, sealed next batch
@example([D1], [1], [D1, Sp(roles=p.const("C"), ts=1, sn=2), Stamp(1, 2)])
@example([Stamp(3, 1), D1], [], [Sp(roles=p.const("C"), ts=3, sn=1), Stamp(3, 1)])
def test_batches_decide_as_figure_10_item_by_item(items, cuts, more):
    """Any history cut into batches anywhere (an sp batch left open across a cut, a policy
    carried over) gives each tuple the policy, and leaves the state, that the per-item rules
    give; then a second history from that state, as one batch."""
    policies, states = by_batches(items, cuts)
    expected, expected_states = one_by_one(items, cuts)
    assert policies == expected and states == expected_states
    state = states[-1]
    assert by_batches(more, [], state) == one_by_one(more, [], state)


@st.composite
def shared_histories(draw):
    """Mostly well-formed histories (each policy 1-2 sps, then tuples naming it) whose sps are
    a few sps again with new timestamps and numbers, as a provider resending its policies
    sends them (``Admitted.kinds`` groups those), and those few share some pattern objects;
    now and then a stray item."""
    patient = st.integers(118, 136).map(lambda t: p.inclusive(t, t + 6))
    parts = [
        draw(st.lists(part, min_size=size, max_size=size + 1))
        for part, size in (
            (st.sampled_from(("s1", "s2")).map(p.const) | st.just(p.WILDCARD), 1),
            (patient | st.just(p.WILDCARD), 1),
            (st.sampled_from(FIELDS).map(p.const) | st.just(p.WILDCARD), 1),
            (st.lists(st.sampled_from(ROLE_NAMES), min_size=1).map(lambda v: p.members(*v)), 2),
        )
    ]
    pool = [
        Sp(
            streams=draw(st.sampled_from(parts[0])),
            tuples=draw(st.sampled_from(parts[1])),
            attributes=draw(st.sampled_from(parts[2])),
            roles=draw(st.sampled_from(parts[3])),
            positive=draw(st.booleans()),
            ts=1,
            sn=1,
        )
        for _ in range(draw(st.integers(2, 4)))
    ]
    items: list = []
    for ts in range(1, draw(st.integers(0, 12)) + 1):
        chosen = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=2))
        items += [replace(sp, ts=ts, sn=n) for n, sp in enumerate(chosen, start=1)]
        items += [Stamp(ts, len(chosen))] * draw(st.integers(1, 3))
        if draw(st.integers(0, 5)) == 0:
            items.insert(draw(st.integers(0, len(items))), draw(st.one_of(sps, stamps)))
    return items


@settings(max_examples=500, deadline=None)
@given(shared_histories(), open_batches, st.sampled_from([None, "Patient_id"]))
def test_a_batch_is_labelled_as_each_tuple_alone(items, cuts, tid):
    """``Deciders.labels``: each tuple's label is what its own policy decides for it."""
    deciders = Deciders("s1", FIELDS, ROLES, tid)
    state = EMPTY
    for stamps, sps_at in batches(items, cuts):
        state, admitted = admit_batch(state, stamps, sps_at)
        tids = [118 + i % 19 for i in range(len(stamps))]
        expected = [
            decide(policy, "s1", {"Patient_id": t}, FIELDS, ROLES, tid)
            for policy, t in zip(admitted.governing(), tids, strict=True)
        ]
        assert deciders.labels(admitted, lambda tids=tids: tids) == expected


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
