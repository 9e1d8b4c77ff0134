"""The Security-Compliant Join's label (seed 003, section 5.4): pairs whose policies meet, on
the join attributes too; Figure 12's strategies give the same results."""

from __future__ import annotations

import random
from collections import Counter, defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from boxes.punctuations import TupleLabel, join

# Fields: (Patient_id, Beats_per_min) on the left, (Patient_id, Temperature) on the right.
KEYS = [(0, 0)]
C, D, GP, ND = 1, 2, 4, 8


def label(*fields):
    mask = 0
    for f in fields:
        mask |= f
    return TupleLabel(mask, fields)


def test_policies_that_meet_give_the_intersection():
    left = label(C | D, C | D)
    right = label(D | GP, D | GP)
    assert join(left, right, KEYS) == TupleLabel(D, (D, D, D, D))


def test_policies_that_do_not_meet_do_not_join():
    assert join(label(C, C), label(GP, GP), KEYS) is None


def test_join_attribute_policies_must_meet_too():
    """Figure 12, line 16: D may read both tuples but not the right's Patient_id."""
    assert join(label(D, D), label(GP, D), KEYS) is None
    left, right = label(C | D, D), label(C | D, C | D)
    assert join(left, right, KEYS) == TupleLabel(C | D, (C | D, D, C | D, C | D))
    assert join(left, label(C | D, D), KEYS) == TupleLabel(C | D, (C | D, D, C | D, D))


# four roles at bits either side of a word's edge and in a third word (more than 64 roles)
WIDE = (0, 63, 64, 129)
masks = st.integers(0, 15).map(lambda m: sum(1 << b for i, b in enumerate(WIDE) if m >> i & 1))
tuples_ = st.tuples(st.integers(0, 3), masks, masks)  # join key, key's mask, value's mask
windows = st.lists(tuples_, max_size=8)


def as_label(key_mask, value_mask):
    return label(key_mask, value_mask)


def probe_and_filter(a, b):
    """Join first, then keep the pairs whose policies are compatible."""
    out = []
    for ka, *la in a:
        for kb, *lb in b:
            if ka == kb:
                joined = join(as_label(*la), as_label(*lb), KEYS)
                if joined is not None:
                    out.append((ka, joined))
    return out


def sub_windows(window):
    groups = defaultdict(list)
    for t in window:
        groups[as_label(*t[1:])].append(t)
    return groups


def filter_and_probe(a, b, pick=None):
    """Partition each window by policy; skip sub-window pairs whose policies do not meet
    (line 13), probe the rest (lines 14-18). ``pick`` chooses a strategy per pair (the
    adaptive join): the results must not depend on it."""
    out = []
    for pa, ta in sub_windows(a).items():
        for pb, tb in sub_windows(b).items():
            if pick is not None and pick(len(ta) / max(len(a), 1), len(tb) / max(len(b), 1)):
                out += probe_and_filter(ta, tb)
                continue
            if not pa.mask & pb.mask:
                continue
            for ka, *_ in ta:
                for kb, *_ in tb:
                    if ka == kb:
                        joined = join(pa, pb, KEYS)
                        if joined is not None:
                            out.append((ka, joined))
    return out


def reference(a, b):
    """Role by role: a pair is joined for role r iff the keys are equal and r may read both
    tuples and both join attributes; r then reads a field iff its side lets r read it."""
    out = []
    for ka, kma, vma in a:
        for kb, kmb, vmb in b:
            roles = [
                r
                for r in (1 << b for b in WIDE)
                if ka == kb and r & (kma | vma) and r & (kmb | vmb) and r & kma and r & kmb
            ]
            if roles:
                fields = tuple(sum(r for r in roles if r & m) for m in (kma, vma, kmb, vmb))
                out.append((ka, TupleLabel(sum(roles), fields)))
    return out


@settings(max_examples=300, deadline=None)
@given(windows, windows, st.randoms(use_true_random=False))
def test_strategies_give_identical_results(a, b, rnd: random.Random):
    expected = Counter(reference(a, b))
    assert Counter(probe_and_filter(a, b)) == expected
    assert Counter(filter_and_probe(a, b)) == expected

    def adaptive(share_a, share_b):  # Figure 12, lines 9-12
        larger = max(share_a, share_b)
        return False if larger > 0.5 else True if larger < 0.2 else rnd.random() < 0.5

    assert Counter(filter_and_probe(a, b, adaptive)) == expected
