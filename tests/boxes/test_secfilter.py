"""The SecFilter as a pure function over Arrow batches (no Spark): strong semantic, many subscribers."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

from boxes.labels import mask_words
from boxes.secfilter import deliveries, label_sources, readable_mask, secfilter

INPUTS = [f"s{i}" for i in range(130)]   # three words: bits 63, 64 and 128 cross word edges


def batch(labels: list[set[int]], words: int = 3) -> pa.Table:
    """A result batch whose row i carries the label ``labels[i]`` (a set of bit positions)."""
    rows = [mask_words(bits, words) for bits in labels]
    label = pa.StructArray.from_arrays([pa.array([r[k] for r in rows], pa.int64()) for k in range(words)],
                                       names=[f"w{k}" for k in range(words)])
    return pa.table({"row": list(range(len(labels))), "_label": label})


def test_readable_mask_sets_the_bits_of_readable_inputs():
    mask = readable_mask(INPUTS, ["s0", "s63", "s64", "s129", "unknown"])
    assert mask.dtype == np.uint64 and len(mask) == 3
    assert mask.tolist() == [1 | 1 << 63, 1, 2]


def test_a_row_is_delivered_iff_its_label_is_within_the_readable_set():
    labels = [{0}, {63}, {0, 64}, {129}, {0, 1}, set()]
    mask = readable_mask(INPUTS, ["s0", "s63", "s64"])
    assert secfilter(batch(labels), mask).column("row").to_pylist() == [0, 1, 2, 5]


def test_record_batches_and_chunked_tables_are_accepted():
    table = pa.concat_tables([batch([{0}, {1}]), batch([{0}])])
    mask = readable_mask(INPUTS, ["s0"])
    assert secfilter(table, mask).num_rows == 2
    assert secfilter(table.to_batches()[0], mask).num_rows == 1


def test_a_mask_of_the_wrong_width_is_refused():
    with pytest.raises(ValueError):
        secfilter(batch([{0}]), readable_mask(INPUTS[:64], ["s0"]))


def test_label_sources_names_each_rows_inputs_sorted():
    assert label_sources(batch([{129, 0}, set(), {64}]), INPUTS) == [["s0", "s129"], [], ["s64"]]


label_sets = st.sets(st.integers(0, len(INPUTS) - 1), max_size=4)


@settings(max_examples=60, deadline=None)
@given(labels=st.lists(label_sets, max_size=40), readers=st.lists(label_sets, min_size=1, max_size=5))
def test_deliveries_for_many_subscribers_equal_the_subset_test(labels, readers):
    table = batch(labels)
    masks = [readable_mask(INPUTS, [INPUTS[i] for i in reader]) for reader in readers]
    got = deliveries(table, masks)
    for reader, mask, rows in zip(readers, masks, got):
        expected = [i for i, label in enumerate(labels) if label <= reader]
        assert rows.tolist() == expected
        assert secfilter(table, mask).column("row").to_pylist() == expected


@pytest.mark.parametrize("label", [set(), {0}, {1, 64, 129}])
def test_a_batch_of_one_label_is_delivered_whole_or_not_at_all(label):
    table = batch([label] * 50)
    allowed, refused = readable_mask(INPUTS, [INPUTS[i] for i in label | {5}]), readable_mask(INPUTS, [INPUTS[7]])
    whole, other = deliveries(table, [allowed, refused])
    assert whole.tolist() == list(range(50))
    assert other.tolist() == ([] if label else list(range(50)))
    assert label_sources(table, INPUTS) == [sorted(INPUTS[i] for i in label)] * 50
