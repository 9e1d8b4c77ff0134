"""The SecFilter over result batches: which tuples each subscriber receives.

The default (strong) semantic delivers a tuple iff its label ⊆ the subscriber's readable set;
an output's owner may choose the weak one (some source readable). A label may also carry its
raw sources apart (``_raw``, READ_AGGREGATE; ``boxes/labels.py``). Per subscriber, with T the
sources it may READ_TUPLE and TA those it may READ_TUPLE or READ_AGGREGATE, each source bit s
of a tuple is *readable as used* iff s is raw and in T, or s is aggregate-only (in the label,
not raw) and in TA. Strong: every bit of the label is; weak: at least one is. Without ``_raw``
every bit is raw, and this is the plain subset (strong) or intersection (weak) test on T.

Pure NumPy/Arrow (no Spark, no per-row Python): the server calls it in the driver for every
result batch and every subscriber, with the readable set as it is *now*, so a revoked
permission takes effect on the next batch. Labels arrive as signed 64-bit words (a ``bigint``
column, or a struct of them above 64 sources; see ``boxes.labels``); here they are read as
unsigned words, one array per word, without copying.

>>> import pyarrow as pa
>>> batch = pa.table({"x": [1, 2, 3], "_label": [0b01, 0b10, 0b11]})  # {in1}, {in2}, both
>>> secfilter(batch, readable_mask(["in1", "in2"], ["in1"])).to_pydict()
{'x': [1], '_label': [1]}
>>> secfilter(batch, readable_mask(["in1", "in2"], ["in1"]), WEAK).to_pydict()
{'x': [1, 3], '_label': [1, 3]}
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
import pandas as pd
import pyarrow as pa

from boxes.labels import LABEL_COLUMN, RAW_COLUMN, WORD_BITS, word_count, word_name
from boxes.levels import LEVEL_COLUMN
from boxes.output import STRONG, WEAK

Batch: TypeAlias = pa.Table | pa.RecordBatch
Words = list[np.ndarray]  # one uint64 array per label word, with an entry per row

# Rough nanoseconds per row on the bench machine, to choose how to answer many readable sets:
# testing a row's label against one mask costs about ``_PER_WORD`` per word plus the picking
# of rows; finding the distinct labels first costs ``_FACTORIZE`` plus ``_PER_WORD_DISTINCT``
# per word (hash and verify), after which each mask costs ``_PER_MASK_DISTINCT``.
_PER_WORD, _PICK = 0.8, 1.5
_FACTORIZE, _PER_WORD_DISTINCT, _PER_MASK_DISTINCT = 15.0, 7.0, 2.5
# Odd multipliers (each permutes the 64-bit words) of MurmurHash3's 64-bit finaliser.
_MIX = (np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53))
_SAMPLE = 1024  # rows looked at before a full check for one label


def readable_mask(inputs: Sequence[str], readable: Iterable[str]) -> np.ndarray:
    """Unsigned label words with bit i set iff ``inputs[i]`` is readable."""
    allowed = set(readable)
    mask = np.zeros(word_count(len(inputs)), dtype=np.uint64)
    for i, name in enumerate(inputs):
        if name in allowed:
            mask[i // WORD_BITS] |= np.uint64(1) << np.uint64(i % WORD_BITS)
    return mask


@dataclass(frozen=True)
class Rights:
    """One subscriber's rights over an output's label bits (unsigned words): the sources it may
    READ_TUPLE, and those it may read at least as aggregates (READ_TUPLE or READ_AGGREGATE)."""

    tuples: np.ndarray
    aggregates: np.ndarray

    @classmethod
    def of(cls, mask: np.ndarray | Rights) -> Rights:
        """A plain readable set (READ_TUPLE only) as rights."""
        if isinstance(mask, Rights):
            return mask
        mask = np.asarray(mask, dtype=np.uint64)
        return cls(mask, mask)

    def key(self) -> bytes:
        return self.tuples.tobytes() + self.aggregates.tobytes()


def rights(inputs: Sequence[str], tuples: Iterable[str], aggregates: Iterable[str] = ()) -> Rights:
    """Rights from the names a subscriber may READ_TUPLE and those it may READ_AGGREGATE."""
    readable = set(tuples)
    return Rights(
        readable_mask(inputs, readable), readable_mask(inputs, readable | set(aggregates))
    )


def label_words(batch: Batch, name: str = LABEL_COLUMN) -> Words:
    """The labels of a batch as unsigned 64-bit words, one array per word (views, no copy
    unless the column comes in several chunks); ``name`` picks the label kind."""
    column = batch.column(name)
    if isinstance(column, pa.ChunkedArray):
        column = (
            column.chunk(0)
            if column.num_chunks == 1
            else column.combine_chunks()
            if column.num_chunks
            else pa.array([], column.type)
        )
    if column.null_count:
        raise ValueError("a result batch has a NULL label; labels are never NULL")
    parts = column.flatten() if pa.types.is_struct(column.type) else [column]
    return [
        np.asarray(part.to_numpy(zero_copy_only=False), dtype=np.int64).view(np.uint64)
        for part in parts
    ]


def label_array(words: Words) -> pa.Array:
    """Labels (one array per word) shaped as Spark hands them over, for batches made outside
    Spark: a ``bigint`` column for one word, a struct of words above."""
    columns = [pa.array(np.asarray(word, dtype=np.uint64).view(np.int64)) for word in words]
    if len(columns) == 1:
        return columns[0]
    return pa.StructArray.from_arrays(columns, names=[word_name(k) for k in range(len(words))])


def _mask(words: Words, mask) -> np.ndarray:
    """A readable set as unsigned words, refused if it does not fit the labels' width."""
    mask = np.asarray(mask, dtype=np.uint64)
    if len(mask) != len(words):
        raise ValueError(f"labels have {len(words)} words but the mask has {len(mask)}")
    return mask


def _within(words: Words, mask: np.ndarray) -> np.ndarray:
    """Boolean per row: no label bit outside ``mask`` (only words with outside bits are read)."""
    outside = None
    for word, out in zip(words, ~mask, strict=True):
        if out:
            bits = word & out
            outside = bits if outside is None else np.bitwise_or(outside, bits, out=outside)
    return np.ones(len(words[0]), dtype=bool) if outside is None else outside == 0


def _meets(words: Words, mask: np.ndarray) -> np.ndarray:
    """Boolean per row: some label bit inside ``mask``."""
    inside = np.zeros(len(words[0]), dtype=bool)
    for word, bits in zip(words, mask, strict=True):
        if bits:
            inside |= (word & bits) != 0
    return inside


def _passes(words: Words, raw: Words | None, rights: Rights, weak: bool) -> np.ndarray:
    """Boolean per row: delivered under the semantic (the rule in this module's docstring)."""
    if raw is None:
        return (_meets if weak else _within)(words, rights.tuples)
    if weak:
        only = [word & ~r for word, r in zip(words, raw, strict=True)]
        return _meets(raw, rights.tuples) | _meets(only, rights.aggregates)
    return _within(raw, rights.tuples) & _within(words, rights.aggregates)


def _labels(batch: Batch) -> tuple[Words, Words | None]:
    """A batch's source words, and its raw words if its labels carry them apart."""
    raw = label_words(batch, RAW_COLUMN) if RAW_COLUMN in batch.schema.names else None
    return label_words(batch), raw


def _semantic(semantic: str) -> bool:
    """Whether ``semantic`` is weak; anything but the two is a bug, never a silent strong."""
    if semantic not in (STRONG, WEAK):
        raise ValueError(f"unknown semantic {semantic!r}")
    return semantic == WEAK


def secfilter(batch: Batch, mask: np.ndarray | Rights, semantic: str = STRONG) -> pa.Table:
    """The rows of ``batch`` one subscriber receives: with a plain ``mask`` (READ_TUPLE only),
    under the strong semantic those whose label is a subset of it."""
    table = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
    (picked,) = deliveries(table, [mask], semantic)
    return table.take(pa.array(picked, pa.int64()))


def deliveries(
    batch: Batch, masks: Sequence[np.ndarray | Rights], semantic: str = STRONG
) -> list[np.ndarray]:
    """Row indexes (ascending) to deliver to each of many subscribers.

    Subscribers share few distinct readable sets, so each distinct mask is answered once.
    A batch whose rows share one label (the common case) is answered whole or not at all per
    mask. Otherwise each mask tests every row directly (about a nanosecond per row and word),
    unless there are enough masks that finding the batch's distinct labels first, testing those
    and spreading the answer back to the rows, is cheaper.
    """
    weak = _semantic(semantic)
    words, raw = _labels(batch)
    keys: dict[bytes, int] = {}
    distinct: list[Rights] = []
    slot: list[int] = []
    for mask in masks:
        right = Rights.of(mask)
        right = Rights(_mask(words, right.tuples), _mask(words, right.aggregates))
        key = right.key()
        if key not in keys:
            keys[key] = len(distinct)
            distinct.append(right)
        slot.append(keys[key])
    answers = _answer(words, raw, batch.num_rows, distinct, weak)
    return [answers[i] for i in slot]


def cleared(batch: Batch, clearance: int) -> np.ndarray:
    """Row indexes whose Chinese-Wall level (``boxes/levels.py``, one word) is dominated by
    ``clearance``: the same subset test as the source label, on the level column."""
    words = label_words(batch, LEVEL_COLUMN)
    mask = np.array([clearance & ((1 << WORD_BITS) - 1)], dtype=np.uint64)
    return np.flatnonzero(_within(words, mask))


def _answer(
    words: Words, raw: Words | None, rows: int, masks: list[Rights], weak: bool
) -> list[np.ndarray]:
    if rows == 0:
        return [np.arange(0)] * len(masks)
    keyed = words + (raw or [])  # a label is its source words and its raw words
    width = len(words)

    def passes(label: Words, right: Rights) -> np.ndarray:
        return _passes(label[:width], label[width:] if raw else None, right, weak)

    if _one_label(keyed):
        first = [word[:1] for word in keyed]
        return [_spread(passes(first, right), None, rows) for right in masks]
    if _distinct_first_is_cheaper(len(keyed), len(masks)):
        labels, codes = distinct_labels(keyed)
        return [_spread(passes(labels, right), codes, rows) for right in masks]
    return [np.flatnonzero(passes(keyed, right)) for right in masks]


def _spread(ok: np.ndarray, codes: np.ndarray | None, rows: int) -> np.ndarray:
    """The rows whose label (its index in ``ok``: ``codes``) passed; no work per row when all
    or none did (then ``codes`` is not needed: one label)."""
    if ok.all():
        return np.arange(rows)
    return np.flatnonzero(ok[codes]) if ok.any() else np.arange(0)


def _distinct_first_is_cheaper(words: int, masks: int) -> bool:
    direct = masks * (_PER_WORD * words + _PICK)
    setup = _FACTORIZE + (_PER_WORD_DISTINCT * words if words > 1 else 0.0)
    return setup + masks * _PER_MASK_DISTINCT < direct


def _one_label(words: Words) -> bool:
    """Whether every row has the first row's label (a sample first: mixed batches show it soon)."""
    for part in (slice(0, _SAMPLE), slice(None)):
        if not all((word[part] == word[0]).all() for word in words):
            return False
    return True


def _row_hashes(words: Words) -> np.ndarray:
    """A 64-bit hash per row: each word is xored into the state, which is then mixed by
    multiply and xor-shift rounds. One round is not enough: label words are mostly single
    bits, and a multiply only carries a bit upwards, so two labels can cancel exactly."""
    state = np.zeros(len(words[0]), dtype=np.uint64)
    for word in words:
        state ^= word
        for multiplier in _MIX:
            state ^= state >> np.uint64(33)
            state *= multiplier
        state ^= state >> np.uint64(33)
    return state


def distinct_labels(words: Words) -> tuple[Words, np.ndarray]:
    """The distinct labels of a batch (one array per word) and, per row, its label's index.

    One hash-based factorisation, O(rows): of the word itself for one-word labels; of a
    64-bit hash of the words otherwise, after which every row is checked against its code's
    representative, so a hash collision cannot merge two labels (it falls back to an exact,
    slower sort of the rows).
    """
    if len(words) == 1:
        codes, values = pd.factorize(words[0].view(np.int64))
        return [values.view(np.uint64)], codes
    codes, hashes = pd.factorize(_row_hashes(words).view(np.int64))
    representative = np.empty(len(hashes), dtype=np.intp)
    representative[codes] = np.arange(len(codes))  # any row of a code will do
    labels = [word[representative] for word in words]
    if all(np.array_equal(word, label[codes]) for word, label in zip(words, labels, strict=True)):
        return labels, codes
    values, codes = np.unique(np.stack(words, axis=1), axis=0, return_inverse=True)
    return list(values.T), codes.reshape(-1)


def label_sources(batch: Batch, inputs: Sequence[str]) -> list[list[str]]:
    """The sorted input names in each row's label (decoded once per distinct label)."""
    labels, codes = distinct_labels(label_words(batch))
    stacked = np.stack(labels, axis=1).astype("<u8")
    bits = np.unpackbits(stacked.view(np.uint8), axis=1, bitorder="little")
    names = [sorted(inputs[int(i)] for i in np.flatnonzero(row) if i < len(inputs)) for row in bits]
    return [names[i] for i in codes]
