"""The SecFilter's label semantics, pure (no Spark): Borealis' Figure 7 under the strong and the
weak semantic, and the aggregate-read right (READ_AGGREGATE) on labels that carry their raw
sources apart (``_raw``). A property test checks every case against a per-bit reference written
from the rule in ``boxes/secfilter.py``'s docstring.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boxes.labels import LABEL_COLUMN, RAW_COLUMN
from boxes.output import STRONG, WEAK
from boxes.secfilter import Rights, deliveries, label_array, readable_mask, rights, secfilter

INPUTS = ("in1", "in2")
# Figure 7: what each of the users A-D may READ_TUPLE.
FIGURE_7 = {"A": [], "B": ["in2"], "C": ["in1"], "D": ["in1", "in2"]}
# p(out) for a tuple derived from in1 and in2 (the join example): AND, then OR.
FIGURE_7_OUT = {
    STRONG: {"A": False, "B": False, "C": False, "D": True},
    WEAK: {"A": False, "B": True, "C": True, "D": True},
}


@pytest.mark.parametrize("semantic", [STRONG, WEAK])
@pytest.mark.parametrize("user", sorted(FIGURE_7))
def test_figure_7(user, semantic):
    joined = pa.table({"x": [1], LABEL_COLUMN: [0b11]})  # in1 ⋈ in2: label {in1, in2}
    out = secfilter(joined, readable_mask(INPUTS, FIGURE_7[user]), semantic)
    assert (out.num_rows == 1) is FIGURE_7_OUT[semantic][user]


@pytest.mark.parametrize("semantic", [STRONG, WEAK])
def test_a_single_source_tuple_is_the_same_under_both_semantics(semantic):
    """Semantics differ only for tuples of several sources: a reader of in1 gets in1's tuples
    and never in2's alone."""
    batch = pa.table({"x": [1, 2], LABEL_COLUMN: [0b01, 0b10]})
    out = secfilter(batch, readable_mask(INPUTS, ["in1"]), semantic)
    assert out.column("x").to_pylist() == [1]


def test_an_unknown_semantic_is_refused_not_taken_as_strong():
    batch = pa.table({"x": [1], LABEL_COLUMN: [0b11]})
    with pytest.raises(ValueError, match="unknown semantic"):
        secfilter(batch, readable_mask(INPUTS, ["in1"]), "lenient")


# Rows: an average over in2 (all {in2}, raw {}), a raw in2 tuple (a filter over in2), an average
# over in1 and in2, and a join of a raw in1 tuple with an in2 average (raw {in1}).
SUMMARISED = pa.table(
    {
        "row": ["avg2", "raw2", "avg12", "in1_x_avg2"],
        LABEL_COLUMN: [0b10, 0b10, 0b11, 0b11],
        RAW_COLUMN: [0b00, 0b10, 0b00, 0b01],
    }
)
# name -> (READ_TUPLE, READ_AGGREGATE), and what each receives under strong and weak
SUBSCRIBERS = {
    "aggregates of in2": ([], ["in2"]),
    "tuples of in1, aggregates of in2": (["in1"], ["in2"]),
    "tuples of in2": (["in2"], []),
    "aggregates of both": ([], ["in1", "in2"]),
}
RECEIVES = {
    STRONG: {
        "aggregates of in2": ["avg2"],
        "tuples of in1, aggregates of in2": ["avg2", "avg12", "in1_x_avg2"],
        "tuples of in2": ["avg2", "raw2"],
        "aggregates of both": ["avg2", "avg12"],
    },
    WEAK: {
        "aggregates of in2": ["avg2", "avg12", "in1_x_avg2"],
        "tuples of in1, aggregates of in2": ["avg2", "avg12", "in1_x_avg2"],
        "tuples of in2": ["avg2", "raw2", "avg12", "in1_x_avg2"],
        "aggregates of both": ["avg2", "avg12", "in1_x_avg2"],
    },
}


@pytest.mark.parametrize("semantic", [STRONG, WEAK])
@pytest.mark.parametrize("who", sorted(SUBSCRIBERS))
def test_aggregate_read(who, semantic):
    tuples, aggregates = SUBSCRIBERS[who]
    out = secfilter(SUMMARISED, rights(INPUTS, tuples, aggregates), semantic)
    assert out.column("row").to_pylist() == RECEIVES[semantic][who]


def test_read_aggregate_counts_for_nothing_without_raw_labels():
    """An output with no aggregate-only step has no ``_raw``: every source is raw, so
    READ_AGGREGATE alone receives none of its tuples, even an aggregate's (a grouped one)."""
    batch = pa.table({"x": [1, 2], LABEL_COLUMN: [0b10, 0b11]})
    for semantic in (STRONG, WEAK):
        assert secfilter(batch, rights(INPUTS, [], ["in1", "in2"]), semantic).num_rows == 0


WORDS = 3  # labels of up to 192 sources: sparse labels, bits in every word


def _reference(label: int, raw: int, tuples: int, aggregates: int, semantic: str) -> bool:
    """Per source bit: readable as used iff raw and READ_TUPLE, or aggregate-only and
    READ_TUPLE or READ_AGGREGATE. Strong: all bits are; weak: some bit is."""
    bits = [b for b in range(WORDS * 64) if label >> b & 1]
    ok = [(tuples >> b & 1) if raw >> b & 1 else ((tuples | aggregates) >> b & 1) for b in bits]
    return all(ok) if semantic == STRONG else any(ok)


def _words(value: int) -> list[int]:
    return [value >> (64 * k) & (1 << 64) - 1 for k in range(WORDS)]


def _mask(value: int) -> np.ndarray:
    return np.array(_words(value), dtype=np.uint64)


SOURCES = st.integers(0, WORDS * 64 - 1)
BITS = st.lists(SOURCES, max_size=6).map(lambda bits: sum({1 << b for b in bits}))


@st.composite
def labelled(draw):
    """A label (never empty) and its raw sources (a subset of it)."""
    label = draw(BITS) | 1 << draw(SOURCES)
    return label, label & draw(BITS | st.just(label))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(labelled(), min_size=1, max_size=40),
    st.lists(st.tuples(BITS, BITS), min_size=1, max_size=24),
    st.sampled_from([STRONG, WEAK]),
)
def test_deliveries_agree_with_the_per_bit_reference(rows, subscribers, semantic):
    """For mixed batches, many subscribers (distinct or shared rights) and both paths the
    SecFilter takes (row by row, or distinct labels first), across three label words."""
    table = pa.table(
        {
            LABEL_COLUMN: label_array(
                [np.array([_words(a)[k] for a, _ in rows], dtype=np.uint64) for k in range(WORDS)]
            ),
            RAW_COLUMN: label_array(
                [np.array([_words(r)[k] for _, r in rows], dtype=np.uint64) for k in range(WORDS)]
            ),
        }
    )
    masks = [Rights(_mask(t), _mask(t | a)) for t, a in subscribers]
    picks = deliveries(table, masks, semantic)
    for (tuples, aggregates), picked in zip(subscribers, picks, strict=True):
        expected = [
            i
            for i, (label, raw) in enumerate(rows)
            if _reference(label, raw, tuples, aggregates, semantic)
        ]
        assert picked.tolist() == expected, (rows, subscribers, semantic)
