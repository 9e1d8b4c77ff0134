"""``[ROWS N] ... GROUP BY k`` (``boxes/countgroups.py``) against a plain-Python reference, with
hypothesis: after each tuple (arrival order) the window is the stream's N greatest (time,
arrival) tuples; at every ``slide``-th entering tuple the relation is one row per group in the
window (count, sum, min, max of its values, OR of its labels), and ISTREAM emits the rows that
were not in the previous instant's relation. Random batchings and shuffles change nothing."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from boxes.countgroups import GroupedCountWindow, key_name
from boxes.countwindow import ARRIVAL, TIME, CountWindow, label_name, value_name
from tests.boxes.test_countwindow import fired

FUNCTIONS = (("count", None), ("sum", 0), ("min", 0), ("max", 0))


def reference(rows, slide, tuples):
    """tuples: (time, arrival, key, label, value) in arrival order."""
    relation, out = set(), []
    for window in fired(rows, slide, tuples):
        current = set()
        for key in {r[2] for r in window}:
            members = [r for r in window if r[2] == key]
            values = [r[4] for r in members]
            label = 0
            for r in members:
                label |= r[3]
            current.add((key, len(members), sum(values), min(values), max(values), label))
        start, end = window[0][0], window[-1][0]
        out += [(start, end, *row) for row in sorted(current - relation)]
        relation = current
    return out


def frame(tuples) -> pd.DataFrame:
    return pd.DataFrame(
        {
            TIME: pd.Series([t[0] for t in tuples], dtype="int64"),
            ARRIVAL: pd.Series([t[1] for t in tuples], dtype="int64"),
            label_name(0): pd.Series([t[3] for t in tuples], dtype="int64"),
            value_name(0): pd.Series([t[4] for t in tuples], dtype="int64"),
            key_name(0): pd.Series([t[2] for t in tuples], dtype="object"),
        }
    )


def run(spec: GroupedCountWindow, batches, seed: int):
    window, pending, relation, out = spec.window.empty(), 0, spec.empty_relation(), []
    rng = np.random.default_rng(seed)
    for batch in batches:
        shuffled = frame(batch).sample(frac=1, random_state=rng) if batch else frame(batch)
        window, pending, relation, results = spec.advance(window, pending, relation, shuffled)
        got = zip(
            results["window_start"].tolist(),
            results["window_end"].tolist(),
            results[key_name(0)].tolist(),
            *[results[f"agg{k}"].tolist() for k in range(len(FUNCTIONS))],
            results[label_name(0)].tolist(),
            strict=True,
        )
        out.extend(got)
    return out


def spec_of(rows: int, slide: int) -> GroupedCountWindow:
    return GroupedCountWindow(CountWindow(rows, slide, FUNCTIONS, 1, carried=(key_name(0),)), 1)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 30), st.sampled_from("abc"), st.integers(0, 5), st.integers(-9, 9)
        ),
        max_size=50,
    ),
    st.integers(1, 10),
    st.integers(1, 3),
    st.lists(st.integers(0, 50), max_size=5),
    st.integers(0, 2**31),
    st.booleans(),
)
def test_grouped_count_window_matches_reference(stream, rows, slide, cuts, seed, in_order):
    if in_order:
        stream = sorted(stream, key=lambda r: r[0])
    tuples = [(t, i, k, 1 << bit, v) for i, (t, k, bit, v) in enumerate(stream)]
    edges = sorted({0, len(tuples), *[c for c in cuts if c <= len(tuples)]})
    batches = [tuples[a:b] for a, b in zip(edges, edges[1:], strict=False)]
    got = run(spec_of(rows, slide), batches, seed)
    want = reference(rows, slide, tuples)
    # Within one instant rows may come in any order; instants keep theirs.
    assert sorted(got) == sorted(want) and len(got) == len(want)


def test_a_group_pushed_out_of_the_window_emits_nothing_and_an_unchanged_one_neither():
    spec = spec_of(2, 1)
    tuples = [(1, 0, "a", 1, 5), (2, 1, "b", 2, 7), (3, 2, "b", 2, 7)]
    got = run(spec, [tuples], 0)
    # t3 pushes a out; b's row changes (count 2): emitted; a's disappearance is not.
    assert [(r[2], r[3]) for r in got] == [("a", 1), ("b", 1), ("b", 2)]
