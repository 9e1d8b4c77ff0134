"""The join of two count windows (``boxes/countjoin.py``) against a plain-Python reference, with
hypothesis.

The reference keeps the definition literally: tuples are taken one at a time, by arrival then
side (left first), or in a batch run by event time, arrival, side; a tuple enters its side's
window when it is among the side's ``rows`` greatest (time, arrival) pairs seen so far, and
then pairs with every tuple of the other side's window with an equal, non-NULL key. The stream
is cut into random batches, each shuffled, to show that batching changes nothing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from boxes.countjoin import CountJoin
from boxes.countwindow import ARRIVAL, TIME, label_name

COLUMNS = (("lk", "lv"), ("rk", "rv"))


def order(replay: bool):
    if replay:
        return lambda r: (r[1], r[2], r[0])
    return lambda r: (r[2], r[0])


def reference(rows, tuples, replay=False):
    """tuples: (side, time, arrival, key or None, label, value). Pairs: (left key, left value,
    right key, right value, label)."""
    windows: tuple[list, list] = ([], [])
    out = []
    for tup in sorted(tuples, key=order(replay)):
        side = tup[0]
        kept = sorted(windows[side] + [tup], key=lambda r: (r[1], r[2]))[-rows[side] :]
        if tup not in kept:
            continue
        windows[side][:] = kept
        for other in windows[1 - side]:
            if tup[3] is not None and tup[3] == other[3]:
                left, right = (tup, other) if side == 0 else (other, tup)
                out.append((left[3], left[5], right[3], right[5], left[4] | right[4]))
    return out


def frame(side: int, tuples) -> pd.DataFrame:
    names = COLUMNS[side]
    return pd.DataFrame(
        {
            TIME: pd.Series([t[1] for t in tuples], dtype="int64"),
            ARRIVAL: pd.Series([t[2] for t in tuples], dtype="int64"),
            label_name(0): pd.Series([t[4] for t in tuples], dtype="int64"),
            names[0]: pd.Series([t[3] for t in tuples], dtype="object"),
            names[1]: pd.Series([t[5] for t in tuples], dtype="int64"),
        }
    )


def run(spec: CountJoin, batches, seed: int):
    rng = np.random.default_rng(seed)
    windows, out = spec.empty(), []
    for batch in batches:
        parts = []
        for side in (0, 1):
            mine = frame(side, [t for t in batch if t[0] == side])
            parts.append(mine.sample(frac=1, random_state=rng))
        windows, pairs = spec.advance(windows, (parts[0], parts[1]))
        out.extend(
            zip(
                *[pairs[c].tolist() for c in (*COLUMNS[0], *COLUMNS[1], label_name(0))], strict=True
            )
        )
    return out


def spec_of(rows, replay=False) -> CountJoin:
    return CountJoin(rows, 1, COLUMNS, (("lk",), ("rk",)), replay)


stream = st.lists(
    st.tuples(
        st.sampled_from([0, 1, 2]),  # left, right, or both (a self-join's tuple on both sides)
        st.integers(0, 20),  # few distinct times: ties, and late tuples
        st.sampled_from(["a", "b", "c", None]),
        st.integers(0, 5),  # the label: a few sources
    ),
    max_size=50,
)


def tuples_of(drawn):
    """One arrival order for both sides; a tuple on both sides has one arrival."""
    out = []
    for i, (where, t, key, bit) in enumerate(drawn):
        for side in (0, 1) if where == 2 else (where,):
            out.append((side, t, i, key, 1 << bit, i))
    return out


@settings(max_examples=300, deadline=None)
@given(
    stream,
    st.integers(1, 6),
    st.integers(1, 6),
    st.lists(st.integers(0, 50), max_size=6),
    st.integers(0, 2**31),
    st.booleans(),
)
def test_count_join_matches_reference(drawn, left_rows, right_rows, cuts, seed, in_order):
    if in_order:
        drawn = sorted(drawn, key=lambda r: r[1])
    tuples = tuples_of(drawn)
    # Batches are cuts of the arrival order (a tuple on both sides stays in one batch).
    edges = sorted({0, len(drawn), *[c for c in cuts if c <= len(drawn)]})
    batches = [[t for t in tuples if a <= t[2] < b] for a, b in zip(edges, edges[1:], strict=False)]
    got = run(spec_of((left_rows, right_rows)), batches, seed)
    want = reference((left_rows, right_rows), tuples)
    # Within a batch, pairs may come in any order.
    assert sorted(got, key=str) == sorted(want, key=str)


@settings(max_examples=100, deadline=None)
@given(stream, st.integers(1, 6), st.integers(1, 6), st.integers(0, 2**31))
def test_a_batch_run_replays_by_event_time(drawn, left_rows, right_rows, seed):
    tuples = tuples_of(drawn)
    got = run(spec_of((left_rows, right_rows), replay=True), [tuples], seed)
    want = reference((left_rows, right_rows), tuples, replay=True)
    assert sorted(got, key=str) == sorted(want, key=str)


def test_a_tuple_pairs_with_the_other_window_when_it_enters_and_evictions_emit_nothing():
    spec = spec_of((1, 2))
    left = [(0, 1, 0, "a", 1, 10), (0, 5, 3, "a", 1, 11)]
    right = [(1, 2, 1, "a", 2, 20), (1, 3, 2, "a", 4, 21), (1, 4, 4, "a", 8, 22)]
    got = run(spec, [left + right], 0)
    # l10 pairs with nothing (the right window is empty); r20 and r21 meet l10; l11 pushes l10
    # out (no retraction) and meets r20, r21; r22 pushes r20 out and meets l11.
    assert got == [
        ("a", 10, "a", 20, 3),
        ("a", 10, "a", 21, 5),
        ("a", 11, "a", 20, 3),
        ("a", 11, "a", 21, 5),
        ("a", 11, "a", 22, 9),
    ]


def test_a_late_tuple_older_than_a_full_window_pairs_with_nothing():
    spec = spec_of((1, 1))
    tuples = [(1, 5, 0, "a", 2, 20), (0, 9, 1, "a", 1, 10), (0, 3, 2, "a", 1, 11)]
    assert run(spec, [tuples], 0) == [("a", 10, "a", 20, 3)]
