"""The SecFilter as a pure function over Arrow batches (no Spark): strong semantic, many
subscribers."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boxes import secfilter as sf
from boxes.labels import mask_words, word_count
from boxes.secfilter import (
    deliveries,
    distinct_labels,
    label_array,
    label_sources,
    readable_mask,
    secfilter,
)

INPUTS = [f"s{i}" for i in range(130)]  # three words: bits 63, 64 and 128 cross word edges


def batch(labels: list[set[int]], words: int = 3) -> pa.Table:
    """A result batch whose row i carries the label ``labels[i]`` (a set of bit positions),
    shaped as Spark hands it over: a ``bigint`` column for one word, sparse sets above."""
    rows = np.array([mask_words(bits, words) for bits in labels], dtype=np.int64).reshape(-1, words)
    label = label_array(list(rows.view(np.uint64).T))
    return pa.table({"row": list(range(len(labels))), "_label": label})


def reference(labels: list[set[int]], reader: set[int]) -> list[int]:
    """The plain definition: row i is delivered iff its label is within the readable set."""
    return [i for i, label in enumerate(labels) if label <= reader]


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
    with pytest.raises(ValueError):
        secfilter(batch([{0}], 1), readable_mask(INPUTS, ["s0"]))


def test_label_sources_names_each_rows_inputs_sorted():
    assert label_sources(batch([{129, 0}, set(), {64}]), INPUTS) == [["s0", "s129"], [], ["s64"]]


label_sets = st.sets(st.integers(0, len(INPUTS) - 1), max_size=4)


@settings(max_examples=60, deadline=None)
@given(
    labels=st.lists(label_sets, max_size=40), readers=st.lists(label_sets, min_size=1, max_size=5)
)
def test_deliveries_for_many_subscribers_equal_the_subset_test(labels, readers):
    table = batch(labels)
    masks = [readable_mask(INPUTS, [INPUTS[i] for i in reader]) for reader in readers]
    got = deliveries(table, masks)
    for reader, mask, rows in zip(readers, masks, got, strict=False):
        expected = reference(labels, reader)
        assert rows.tolist() == expected
        assert secfilter(table, mask).column("row").to_pylist() == expected


@pytest.mark.parametrize("label", [set(), {0}, {1, 64, 129}])
def test_a_batch_of_one_label_is_delivered_whole_or_not_at_all(label):
    table = batch([label] * 50)
    allowed, refused = (
        readable_mask(INPUTS, [INPUTS[i] for i in label | {5}]),
        readable_mask(INPUTS, [INPUTS[7]]),
    )
    whole, other = deliveries(table, [allowed, refused])
    assert whole.tolist() == list(range(50))
    assert other.tolist() == ([] if label else list(range(50)))
    assert label_sources(table, INPUTS) == [sorted(INPUTS[i] for i in label)] * 50


def one_word_sets(max_size: int = 3):
    return st.sets(st.integers(0, 63), max_size=max_size)


@settings(max_examples=60, deadline=None)
@given(
    labels=st.lists(one_word_sets(), max_size=40),
    readers=st.lists(one_word_sets(8), min_size=1, max_size=5),
)
def test_one_word_bigint_labels_are_filtered_like_the_definition(labels, readers):
    table = batch(labels, words=1)
    assert pa.types.is_int64(table.schema.field("_label").type)
    names = INPUTS[:64]
    masks = [readable_mask(names, [names[i] for i in reader]) for reader in readers]
    for reader, mask, rows in zip(readers, masks, deliveries(table, masks), strict=False):
        assert rows.tolist() == reference(labels, reader)
        assert secfilter(table, mask).column("row").to_pylist() == reference(labels, reader)
    assert label_sources(table, names) == [sorted(names[i] for i in label) for label in labels]


@pytest.mark.parametrize("words", [1, 3])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_many_readable_sets_agree_with_the_definition(words, data):
    """Enough distinct masks that the batch's distinct labels are found first and shared."""
    bits = st.sets(st.integers(0, words * 64 - 1), max_size=3)
    labels = data.draw(st.lists(bits, max_size=60)) + [set(), {words * 64 - 1}]  # mixed
    readers = data.draw(
        st.lists(
            st.frozensets(st.integers(0, words * 64 - 1), max_size=words * 40),
            min_size=60,
            max_size=80,
            unique=True,
        )
    )
    names = INPUTS[: words * 64] if words == 1 else INPUTS + [f"x{i}" for i in range(62)]
    masks = [readable_mask(names, [names[i] for i in reader]) for reader in readers]
    distinct = len({m.tobytes() for m in masks})
    if words == 1:
        assert not sf._distinct_first_is_cheaper(words, distinct)
    else:
        assert sf._sparse_distinct_first_is_cheaper(1.5, distinct)
    for reader, rows in zip(readers, deliveries(batch(labels, words), masks), strict=False):
        assert rows.tolist() == reference(labels, reader)


@settings(max_examples=40, deadline=None)
@given(labels=st.lists(label_sets, max_size=50))
def test_distinct_labels_are_exactly_the_distinct_rows(labels):
    rows = np.array([mask_words(bits, 3) for bits in labels], dtype=np.int64).reshape(-1, 3)
    words = list(rows.view(np.uint64).T)
    distinct, codes = distinct_labels(words)
    rows = np.stack(words, axis=1) if labels else np.zeros((0, 3), np.uint64)
    table = np.stack(distinct, axis=1) if labels else np.zeros((0, 3), np.uint64)
    assert len(table) == len({tuple(r) for r in rows.tolist()})
    assert (table[codes] == rows).all()


def test_a_hash_collision_does_not_merge_two_labels():
    """The row hash xors each word into its state, so a second word can cancel the first's
    difference: two distinct labels with equal hashes, which must stay apart."""
    first = np.array([1, 2], dtype=np.uint64)  # labels {0} and {1} in word 0 ...
    state = sf._row_hashes([first])
    second = np.array([0, state[0] ^ state[1]], dtype=np.uint64)  # ... and word 1 to collide
    words = [first, second]
    hashes = sf._row_hashes(words)
    assert hashes[0] == hashes[1]
    distinct, codes = distinct_labels(words)
    assert codes[0] != codes[1]
    assert [d.tolist() for d in distinct] == [[1, 2], [0, int(second[1])]]
    table = pa.table({"row": [0, 1], "_label": label_array(words)})
    names = [f"s{i}" for i in range(128)]
    high = sorted(names[64 + i] for i in range(64) if int(second[1]) >> i & 1)
    assert label_sources(table, names) == [["s0"], sorted(["s1", *high])]


@pytest.mark.parametrize("words", [1, 3])
def test_an_empty_batch_delivers_nothing_and_a_mask_of_the_wrong_width_is_refused(words):
    table = batch([], words)
    names = INPUTS[: 64 * words]
    assert [r.tolist() for r in deliveries(table, [readable_mask(names, names)] * 2)] == [[], []]
    assert deliveries(table, []) == []
    if words == 1:  # a one-word label: a mask of exactly one word
        wider = readable_mask([f"n{i}" for i in range(65)], [])
        with pytest.raises(ValueError):
            deliveries(batch([{0}], 1), [wider])
    else:  # a sparse label: a mask of more than a word, with every index inside
        narrower = readable_mask(INPUTS[:128], [])
        with pytest.raises(ValueError):
            deliveries(batch([{129}], words), [narrower])
        with pytest.raises(ValueError):
            deliveries(batch([{0}], words), [readable_mask(INPUTS[:64], [])])


def test_sparse_labels_arrive_as_lists_of_bit_indexes():
    column = batch([{129, 0}, set(), {64}]).column("_label")
    assert pa.types.is_list(column.type)
    assert column.to_pylist() == [[0, 129], [], [64]]


@settings(max_examples=40, deadline=None)
@given(labels=st.lists(label_sets, max_size=50), raws=st.lists(label_sets, max_size=50))
def test_distinct_sparse_rows_are_exactly_the_distinct_rows(labels, raws):
    raws = (raws + [set()] * len(labels))[: len(labels)]
    table = batch(labels).append_column("_raw", batch(raws).column("_label"))
    parts = [sf.Sparse.of(table.column(c).combine_chunks()) for c in ("_label", "_raw")]
    representatives, codes = sf._distinct_rows(parts)
    keys = [(frozenset(a), frozenset(r)) for a, r in zip(labels, raws, strict=True)]
    assert len(representatives) == len(set(keys))
    assert all(keys[representatives[c]] == key for c, key in zip(codes, keys, strict=True))


def test_a_sparse_hash_collision_does_not_merge_two_labels(monkeypatch):
    """Every row hashes alike: the exact grouping must still tell the labels apart."""
    monkeypatch.setattr(sf.Sparse, "hashes", lambda self: np.zeros(self.rows, np.uint64))
    table = batch([{0}, {1, 129}, {0}, {1, 129}])
    (label,) = [sf.Sparse.of(table.column("_label").combine_chunks())]
    representatives, codes = sf._distinct_rows([label])
    assert representatives.tolist() == [0, 1] and codes.tolist() == [0, 1, 0, 1]
    assert label_sources(table, INPUTS) == [["s0"], ["s1", "s129"], ["s0"], ["s1", "s129"]]


def test_a_reader_of_every_source_gets_every_row_of_a_mixed_batch():
    labels = [{0}, {1, 64}, {129}, set()]
    (rows,) = deliveries(batch(labels), [readable_mask(INPUTS, INPUTS)])
    assert rows.tolist() == [0, 1, 2, 3]
    assert word_count(len(INPUTS)) == 3
