"""Count windows (``boxes/countwindow.py``) against a plain-Python reference, with hypothesis.

The reference keeps CQL's definition literally: after each tuple (in arrival order) the window
is the ``rows`` greatest (time, arrival) pairs seen so far; a tuple that is not among them never
entered; after every ``slide``-th entering tuple the aggregates of the window are a result, and
its label is the OR of the window's labels. The stream is cut into random batches (each shuffled,
as Spark may hand rows over in any order) to show that batching changes nothing.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from boxes.countwindow import ARRIVAL, KEEP, TIME, CountWindow, label_name, value_name

FUNCTIONS = (("count", None), ("count", 0), ("sum", 0), ("avg", 0), ("min", 0), ("max", 0))
FUNCTIONS += (("sum", 1), ("avg", 1), ("min", 1), ("max", 1))


def fired(rows, slide, tuples):
    """The window each time it fires: the newest ``rows`` tuples by (time, arrival), after
    every ``slide`` tuples it takes in; a tuple older than all of a full window is not taken
    in. ``tuples`` start (time, arrival, ...), in arrival order."""
    window, pending = [], 0
    for tup in tuples:
        candidates = sorted(window + [tup], key=lambda r: (r[0], r[1]))[-rows:]
        if tup not in candidates:
            continue
        window, pending = candidates, pending + 1
        if pending < slide:
            continue
        pending = 0
        yield window


def reference(rows, slide, tuples, keyed=False):
    """tuples: (time, arrival, label, long value, double value or None[, kept]) in arrival
    order. With ``kept`` (a ``where``), only the window's kept tuples are aggregated, and with
    ``keyed`` a window with none has no result."""
    out = []
    for window in fired(rows, slide, tuples):
        kept = [r for r in window if len(r) < 6 or r[5]]
        if keyed and not kept:
            continue
        longs = [r[3] for r in kept]
        doubles = [r[4] for r in kept if r[4] is not None]
        label = 0
        for r in window:
            label |= r[2]
        out.append(
            (
                window[0][0],
                window[-1][0],
                len(kept),
                len(longs),
                sum(longs) if longs else None,
                sum(longs) / len(longs) if longs else None,
                min(longs) if longs else None,
                max(longs) if longs else None,
                math.fsum(doubles) if doubles else None,
                math.fsum(doubles) / len(doubles) if doubles else None,
                min(doubles) if doubles else None,
                max(doubles) if doubles else None,
                label,
            )
        )
    return out


def frame(tuples) -> pd.DataFrame:
    return pd.DataFrame(
        {
            KEEP: pd.Series([len(t) < 6 or t[5] for t in tuples], dtype="bool"),
            TIME: pd.Series([t[0] for t in tuples], dtype="int64"),
            ARRIVAL: pd.Series([t[1] for t in tuples], dtype="int64"),
            label_name(0): pd.Series([t[2] for t in tuples], dtype="int64"),
            value_name(0): pd.Series([t[3] for t in tuples], dtype="int64"),
            value_name(1): pd.Series(
                [np.nan if t[4] is None else t[4] for t in tuples], dtype="float64"
            ),
        }
    )


def run(spec: CountWindow, batches, shuffle_seed: int):
    window, pending, out = spec.empty(), 0, []
    rng = np.random.default_rng(shuffle_seed)
    for batch in batches:
        shuffled = frame(batch).sample(frac=1, random_state=rng) if batch else frame(batch)
        window, pending, results = spec.advance(window, pending, shuffled)
        out.extend(zip(*[column.tolist() for column in results.values()], strict=True))
    return out


def same(got, want) -> bool:
    if len(got) != len(want):
        return False
    for g_row, w_row in zip(got, want, strict=True):
        for g, w in zip(g_row, w_row, strict=True):
            if w is None or g is None or (isinstance(g, float) and math.isnan(g)):
                if not (w is None and (g is None or (isinstance(g, float) and math.isnan(g)))):
                    return False
            elif isinstance(w, float):
                if not math.isclose(g, w, rel_tol=1e-9, abs_tol=1e-9):
                    return False
            elif g != w:
                return False
    return True


values = st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False))
streams = st.lists(
    st.tuples(
        st.integers(0, 30),  # few distinct times: many ties
        st.integers(0, 5),  # the label: a few sources
        st.integers(-(2**40), 2**40),
        values,
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(
    streams,
    st.integers(1, 12),
    st.integers(1, 4),
    st.lists(st.integers(0, 60), max_size=6),
    st.integers(0, 2**31),
    st.booleans(),
)
def test_count_window_matches_reference(stream, rows, slide, cuts, seed, in_order):
    if in_order:  # the common case, all on the vectorized path
        stream = sorted(stream, key=lambda r: r[0])
    tuples = [(t, i, 1 << bit, v, d) for i, (t, bit, v, d) in enumerate(stream)]
    edges = sorted({0, len(tuples), *[c for c in cuts if c <= len(tuples)]})
    batches = [tuples[a:b] for a, b in zip(edges, edges[1:], strict=False)]
    spec = CountWindow(rows, slide, FUNCTIONS, 1)
    assert same(run(spec, batches, seed), reference(rows, slide, tuples))


@settings(max_examples=200, deadline=None)
@given(
    streams,
    st.lists(st.booleans(), min_size=60, max_size=60),
    st.integers(1, 12),
    st.lists(st.integers(0, 60), max_size=6),
    st.booleans(),
)
def test_where_aggregates_the_windows_kept_tuples(stream, kept, rows, cuts, keyed):
    """CQL's ``S [ROWS n] WHERE p``: the window holds the last n tuples of all, and only those
    satisfying p are aggregated; its label is still every tuple's in the window."""
    tuples = [(t, i, 1 << b, v, d, kept[i]) for i, (t, b, v, d) in enumerate(stream)]
    edges = sorted({0, len(tuples), *[c for c in cuts if c <= len(tuples)]})
    batches = [tuples[a:b] for a, b in zip(edges, edges[1:], strict=False)]
    spec = CountWindow(rows, 1, FUNCTIONS, 1, where=True, keyed=keyed)
    assert same(run(spec, batches, 0), reference(rows, 1, tuples, keyed))


def test_late_tuple_older_than_a_full_window_never_enters():
    spec = CountWindow(2, 1, (("count", None),), 1)
    tuples = [(10, 0, 1, 0, None), (20, 1, 2, 0, None), (5, 2, 4, 0, None), (15, 3, 8, 0, None)]
    got = run(spec, [tuples], 0)
    # (5) is older than both of a full window: no result; (15) pushes (10) out.
    assert [(r[0], r[1], r[-1]) for r in got] == [(10, 10, 1), (10, 20, 3), (15, 20, 10)]


def test_equal_times_are_ordered_by_arrival():
    spec = CountWindow(1, 1, (("max", 0),), 1)
    tuples = [(7, 0, 1, 100, None), (7, 1, 2, 200, None), (7, 2, 4, 300, None)]
    assert [r[2] for r in run(spec, [tuples[::-1]], 0)] == [100, 200, 300]


def test_long_sum_overflow_is_null():
    spec = CountWindow(2, 1, (("sum", 0),), 1)
    tuples = [(1, 0, 1, 2**62, None), (2, 1, 1, 2**62, None), (3, 2, 1, 1, None)]
    assert [r[2] for r in run(spec, [tuples], 0)] == [2**62, None, 2**62 + 1]
