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
permission takes effect on the next batch. Labels arrive as a signed 64-bit word (a ``bigint``
column), read here as unsigned words without copying; above 64 sources as sparse sets (a list
of set bit indexes per row; see ``boxes.labels``), read as one flat array of indexes and the
rows' offsets into it: each index is looked up in the readable set's bitmap and the hits
counted per row (strong: all of a row's indexes hit; weak: one does).

>>> import pyarrow as pa
>>> batch = pa.table({"x": [1, 2, 3], "_label": [0b01, 0b10, 0b11]})  # {in1}, {in2}, both
>>> secfilter(batch, readable_mask(["in1", "in2"], ["in1"])).to_pydict()
{'x': [1], '_label': [1]}
>>> secfilter(batch, readable_mask(["in1", "in2"], ["in1"]), WEAK).to_pydict()
{'x': [1, 3], '_label': [1, 3]}
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
import pandas as pd
import pyarrow as pa

from boxes.labels import (
    DENIED_COLUMN,
    HIDDEN_COLUMN,
    LABEL_COLUMN,
    RAW_COLUMN,
    RESERVED,
    WORD_BITS,
    word_count,
)
from boxes.levels import LEVEL_COLUMN
from boxes.output import STRONG, WEAK
from boxes.punctuations.words import readers

log = logging.getLogger(__name__)

Batch: TypeAlias = pa.Table | pa.RecordBatch
Words = list[np.ndarray]  # one uint64 array per label word, with an entry per row

# Rough nanoseconds per row on the bench machine, to choose how to answer many readable sets:
# testing a row's label against one mask costs about ``_PER_WORD`` per word plus the picking
# of rows; finding the distinct labels first costs ``_FACTORIZE`` plus ``_PER_WORD_DISTINCT``
# per word (hash and verify), after which each mask costs ``_PER_MASK_DISTINCT``.
_PER_WORD, _PICK = 0.8, 1.5
_FACTORIZE, _PER_WORD_DISTINCT, _PER_MASK_DISTINCT = 15.0, 7.0, 2.5
# Sparse labels: per index of a row, testing one mask (look up, count) and hashing.
_PER_INDEX, _PER_INDEX_DISTINCT = 4.0, 10.0
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


def _column(batch: Batch, name: str) -> pa.Array:
    """One column of a batch as a single array (no copy unless it comes in several chunks)."""
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
    return column


def label_words(batch: Batch, name: str = LABEL_COLUMN) -> Words:
    """A one-word (``bigint``) label column as unsigned 64-bit words (a view, no copy);
    ``name`` picks the label kind."""
    return [_words(_column(batch, name))]


def _words(column: pa.Array) -> np.ndarray:
    return np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.int64).view(np.uint64)


@dataclass(frozen=True)
class Sparse:
    """Sparse labels of a batch (``boxes.labels``): row i's set bit indexes are
    ``values[offsets[i] : offsets[i + 1]]``, ascending (``offsets[0]`` is 0)."""

    values: np.ndarray
    offsets: np.ndarray

    @classmethod
    def of(cls, column: pa.Array) -> Sparse:
        """From a list column, without copying the indexes (unless a slice must be rebased)."""
        offsets = column.offsets.to_numpy(zero_copy_only=False)
        values = column.values.to_numpy(zero_copy_only=False)[offsets[0] : offsets[-1]]
        return cls(values, offsets - offsets[0] if offsets[0] else offsets)

    @property
    def rows(self) -> int:
        return len(self.offsets) - 1

    def sizes(self) -> np.ndarray:
        return np.diff(self.offsets)

    def row_of(self, positions: np.ndarray) -> np.ndarray:
        """The row each of ``positions`` (into ``values``) belongs to."""
        return np.searchsorted(self.offsets, positions, side="right") - 1

    def within(self, bitmap: np.ndarray) -> np.ndarray:
        """Boolean per row: every index in ``bitmap``; the work beyond one look-up per index
        is only for the indexes outside."""
        ok = np.ones(self.rows, dtype=bool)
        ok[self.row_of(np.flatnonzero(~bitmap[self.values]))] = False
        return ok

    def hits(self, bitmap: np.ndarray) -> np.ndarray:
        """Per row, how many of its indexes ``bitmap`` has (O(indexes), no loop per row)."""
        found = np.zeros(len(self.values) + 1, dtype=np.int64)
        np.cumsum(bitmap[self.values], out=found[1:])
        return found[self.offsets[1:]] - found[self.offsets[:-1]]

    def take(self, rows: np.ndarray) -> Sparse:
        """The labels of ``rows`` only."""
        sizes = self.sizes()[rows]
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        starts = np.repeat(self.offsets[:-1][rows] - offsets[:-1], sizes)
        return Sparse(self.values[starts + np.arange(offsets[-1])], offsets)

    def sets(self) -> list[np.ndarray]:
        """Each row's indexes."""
        return [self.values[a:b] for a, b in zip(self.offsets[:-1], self.offsets[1:], strict=True)]

    def same(self) -> bool:
        """Whether every row has the first row's label."""
        sizes = self.sizes()
        if not (sizes == sizes[0]).all():
            return False
        rows = self.values.reshape(self.rows, sizes[0])
        return bool((rows == rows[:1]).all())

    def hashes(self) -> np.ndarray:
        """A 64-bit hash per row: of the sum of its mixed indexes and of its size."""
        mixed = np.zeros(len(self.values) + 1, dtype=np.uint64)
        np.cumsum(_mixed(self.values.astype(np.uint64) + np.uint64(1)), out=mixed[1:])
        total = mixed[self.offsets[1:]] - mixed[self.offsets[:-1]]
        return _mixed(total ^ self.sizes().astype(np.uint64))


Labels: TypeAlias = Words | Sparse


def _read(batch: Batch, name: str) -> Labels:
    """A label column as words (``bigint``) or sparse sets (a list per row)."""
    column = _column(batch, name)
    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
        return Sparse.of(column)
    return [_words(column)]


def label_array(words: Words) -> pa.Array:
    """Labels (one array per word) shaped as Spark hands them over, for batches made outside
    Spark: a ``bigint`` column for one word, sparse sets (a list of bit indexes) above."""
    if len(words) == 1:
        return pa.array(np.asarray(words[0], dtype=np.uint64).view(np.int64))
    stacked = np.stack([np.asarray(w, dtype=np.uint64) for w in words], axis=1).astype("<u8")
    bits = np.unpackbits(stacked.view(np.uint8), axis=1, bitorder="little")
    offsets = np.zeros(len(bits) + 1, dtype=np.int32)
    np.cumsum(bits.sum(axis=1), out=offsets[1:])
    indexes = np.nonzero(bits)[1].astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(indexes, pa.int32()))


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


def _passes_sparse(label: Sparse, raw: Sparse | None, bitmaps, weak: bool) -> np.ndarray:
    """``_passes`` on sparse labels, by counting per row the indexes each readable set has
    (``bitmaps``: READ_TUPLE, then READ_TUPLE or READ_AGGREGATE). With raw sources, which are
    a subset of the label's, a weak row has an aggregate-only source readable as an aggregate
    iff the label has more such indexes than its raw sources do."""
    tuples, aggregates = bitmaps
    if raw is None:
        return label.hits(tuples) > 0 if weak else label.within(tuples)
    if weak:
        return (raw.hits(tuples) > 0) | (label.hits(aggregates) > raw.hits(aggregates))
    return raw.within(tuples) & label.within(aggregates)


def _bitmap(mask: np.ndarray) -> np.ndarray:
    """A readable set's words as one boolean per source bit."""
    return np.unpackbits(mask.astype("<u8").view(np.uint8), bitorder="little").view(bool)


def _sparse_mask(labels: Sparse, mask) -> np.ndarray:
    """A readable set for sparse labels: wider than a word (sparse labels are), and holding
    every index the labels name."""
    mask = np.asarray(mask, dtype=np.uint64)
    if len(mask) < 2 or (len(labels.values) and labels.values.max() >= len(mask) * WORD_BITS):
        raise ValueError(f"sparse labels need a readable set wider than its {len(mask)} words")
    return mask


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
    labels = _read(batch, LABEL_COLUMN)
    raw = _read(batch, RAW_COLUMN) if RAW_COLUMN in batch.schema.names else None

    def fit(mask) -> np.ndarray:
        return _sparse_mask(labels, mask) if isinstance(labels, Sparse) else _mask(labels, mask)

    keys: dict[bytes, int] = {}
    distinct: list[Rights] = []
    slot: list[int] = []
    for mask in masks:
        right = Rights.of(mask)
        right = Rights(fit(right.tuples), fit(right.aggregates))
        key = right.key()
        if key not in keys:
            keys[key] = len(distinct)
            distinct.append(right)
        slot.append(keys[key])
    if isinstance(labels, Sparse):
        assert raw is None or isinstance(raw, Sparse)
        answers = _answer_sparse(labels, raw, distinct, weak)
    else:
        assert raw is None or not isinstance(raw, Sparse)
        answers = _answer(labels, raw, batch.num_rows, distinct, weak)
    return [answers[i] for i in slot]


def cleared(batch: Batch, clearance: int) -> np.ndarray:
    """Row indexes whose Chinese-Wall level (``boxes/levels.py``, one word) is dominated by
    ``clearance``: the same subset test as the source label, on the level column."""
    words = label_words(batch, LEVEL_COLUMN)
    mask = np.array([clearance & ((1 << WORD_BITS) - 1)], dtype=np.uint64)
    return np.flatnonzero(_within(words, mask))


@dataclass(frozen=True)
class Reader:
    """One subscriber as an output's labels see it: its rights over the label's sources, its
    clearance (a level word, ``boxes/levels.py``) and its active roles' sp bits (a mask of any
    width, ``boxes/punctuations/words.py``)."""

    rights: Rights
    clearance: int = 0
    roles: int = 0


@dataclass(frozen=True)
class Seen:
    """What one reader receives of a batch: its rows (indexes, ascending) and, per field the
    rows' sps may hide apart, which of those rows show that field null to it."""

    rows: np.ndarray
    hidden: Mapping[str, np.ndarray]


def user_fields(names: Iterable[str]) -> list[str]:
    """The columns of a batch that are its fields, not a label of any kind."""
    return [n for n in names if n not in RESERVED and n != LEVEL_COLUMN]


def visible(
    batch: Batch, audience: Sequence[Reader], semantic: str = STRONG, leveled: bool = False
) -> list[Seen]:
    """The one rule of who receives what of a batch, per reader of ``audience``: the source
    labels under ``semantic``; the level, which the reader's clearance must dominate (rows of
    an output at a level, ``leveled``, that came without it go to nobody: deny by default,
    whatever upstream lost it); the rows' sps, one of whose granted roles the reader must
    play (a row whose every field is hidden apart goes to nobody); and the fields hidden from
    its roles. Readers with the same rights, clearance or roles share each answer."""
    table = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
    picks = deliveries(table, [reader.rights for reader in audience], semantic)
    picks = _narrowed(picks, [r.clearance for r in audience], _level_rule(table, leveled))
    picks = _narrowed(picks, [r.roles for r in audience], _role_rule(table))
    words = _hidden_words(table) or {}
    hides = {n: words[n] for n in table.column_names if n in words}  # in the fields' order
    shown: dict[int, dict[str, np.ndarray]] = {}
    out = []
    for picked, reader in zip(picks, audience, strict=True):
        if reader.roles not in shown:
            shown[reader.roles] = {n: readers(w, reader.roles) for n, w in hides.items()}
        out.append(Seen(picked, {n: ~seen[picked] for n, seen in shown[reader.roles].items()}))
    return out


Rule = Callable[[int], np.ndarray]  # a reader's key (clearance, roles) -> the rows it passes


def _narrowed(picks: list, keys: Sequence[int], rule: Rule | None) -> list:
    """Each reader's rows that ``rule`` also passes for its key (once per distinct key)."""
    if rule is None:
        return picks
    answers: dict[int, np.ndarray] = {}
    for key in keys:
        if key not in answers:
            answers[key] = rule(key)
    return [
        np.intersect1d(picked, answers[key], assume_unique=True)
        for picked, key in zip(picks, keys, strict=True)
    ]


def _level_rule(table: pa.Table, leveled: bool) -> Rule | None:
    """Rows a clearance dominates; None for rows at no level (an output at none)."""
    if LEVEL_COLUMN in table.column_names:
        return lambda clearance: cleared(table, clearance)
    if leveled:
        log.error("rows at a level came without %s: none delivered", LEVEL_COLUMN)
        return lambda clearance: np.zeros(0, np.int64)
    return None


def _role_rule(table: pa.Table) -> Rule | None:
    """Rows one of a reader's roles may read under their sps: not denied, and where every field
    may be hidden apart, some field shown; None for rows no sp governs."""
    if DENIED_COLUMN not in table.column_names:
        return None
    denied = table.column(DENIED_COLUMN).combine_chunks()
    words = _hidden_words(table)
    apart = words is not None and set(user_fields(table.column_names)) <= set(words)

    def rule(roles: int) -> np.ndarray:
        seen = readers(denied, roles)
        if apart:
            assert words is not None
            seen &= np.any([readers(w, roles) for w in words.values()], axis=0)
        return np.flatnonzero(seen)

    return rule


def _hidden_words(table: pa.Table) -> dict[str, pa.Array] | None:
    """Per field the rows' sps may hide apart (``_sp_hidden``), the roles they hide it from;
    None where none may be."""
    if HIDDEN_COLUMN not in table.column_names:
        return None
    words = table.column(HIDDEN_COLUMN).combine_chunks()
    return {f.name: words.field(i) for i, f in enumerate(words.type)}


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


def _answer_sparse(
    label: Sparse, raw: Sparse | None, masks: list[Rights], weak: bool
) -> list[np.ndarray]:
    """``_answer`` for sparse labels: one label, distinct labels first, or row by row."""
    rows = label.rows
    if rows == 0:
        return [np.arange(0)] * len(masks)
    parts = [label] if raw is None else [label, raw]
    bitmaps = [(_bitmap(m.tuples), _bitmap(m.aggregates)) for m in masks]

    def passes(chosen: np.ndarray | None) -> list[np.ndarray]:
        some = [p if chosen is None else p.take(chosen) for p in parts]
        return [_passes_sparse(some[0], some[1] if raw else None, b, weak) for b in bitmaps]

    if all(p.same() for p in parts):
        return [_spread(ok, None, rows) for ok in passes(np.arange(1))]
    indexes = sum(len(p.values) for p in parts) / rows
    if _sparse_distinct_first_is_cheaper(indexes, len(masks)):
        representatives, codes = _distinct_rows(parts)
        return [_spread(ok, codes, rows) for ok in passes(representatives)]
    return [np.arange(rows) if ok.all() else np.flatnonzero(ok) for ok in passes(None)]


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


def _sparse_distinct_first_is_cheaper(indexes: float, masks: int) -> bool:
    """``_distinct_first_is_cheaper`` for sparse labels of ``indexes`` indexes a row."""
    direct = masks * (_PER_INDEX * indexes + _PICK)
    setup = _FACTORIZE + _PER_INDEX_DISTINCT * indexes
    return setup + masks * _PER_MASK_DISTINCT < direct


def _one_label(words: Words) -> bool:
    """Whether every row has the first row's label (a sample first: mixed batches show it soon)."""
    for part in (slice(0, _SAMPLE), slice(None)):
        if not all((word[part] == word[0]).all() for word in words):
            return False
    return True


def _mixed(state: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser, elementwise (a new array)."""
    state = state.copy()
    for multiplier in _MIX:
        state ^= state >> np.uint64(33)
        state *= multiplier
    state ^= state >> np.uint64(33)
    return state


def _row_hashes(words: Words) -> np.ndarray:
    """A 64-bit hash per row: each word is xored into the state, which is then mixed by
    multiply and xor-shift rounds. One round is not enough: label words are mostly single
    bits, and a multiply only carries a bit upwards, so two labels can cancel exactly."""
    state = np.zeros(len(words[0]), dtype=np.uint64)
    for word in words:
        state = _mixed(state ^ word)
    return state


def _distinct_rows(parts: list[Sparse]) -> tuple[np.ndarray, np.ndarray]:
    """One row per distinct sparse label (of all ``parts`` together) and each row's index
    among them: by a hash per row, verified against its representative (a collision falls
    back to an exact, slower grouping of the rows' index tuples)."""
    hashes = np.zeros(parts[0].rows, dtype=np.uint64)
    for part in parts:
        hashes = _mixed(hashes ^ part.hashes())
    codes, uniques = pd.factorize(hashes.view(np.int64))
    representatives = np.empty(len(uniques), dtype=np.intp)
    representatives[codes[::-1]] = np.arange(len(codes))[::-1]  # the first row of each
    same = np.arange(len(codes)), representatives[codes]
    if all(np.array_equal(p.take(same[0]).values, p.take(same[1]).values) for p in parts) and all(
        np.array_equal(p.sizes()[same[0]], p.sizes()[same[1]]) for p in parts
    ):
        return representatives, codes
    seen: dict[tuple, int] = {}
    keys = zip(*[[tuple(s.tolist()) for s in p.sets()] for p in parts], strict=True)
    codes = np.array([seen.setdefault(key, len(seen)) for key in keys], dtype=np.intp)
    representatives = np.empty(len(seen), dtype=np.intp)
    representatives[codes[::-1]] = np.arange(len(codes))[::-1]
    return representatives, codes


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
    labels = _read(batch, LABEL_COLUMN)
    if isinstance(labels, Sparse):
        representatives, codes = _distinct_rows([labels])
        sets = labels.take(representatives).sets()
    else:
        distinct, codes = distinct_labels(labels)
        stacked = np.stack(distinct, axis=1).astype("<u8")
        bits = np.unpackbits(stacked.view(np.uint8), axis=1, bitorder="little")
        sets = [np.flatnonzero(row) for row in bits]
    names = [sorted(inputs[int(i)] for i in row if i < len(inputs)) for row in sets]
    return [names[i] for i in codes]
