"""The strong-semantic SecFilter over result batches: deliver a tuple iff its label ⊆ readable set.

Pure NumPy/Arrow (no Spark, no per-row Python): the server calls it in the driver for every
result batch and every subscriber, with the readable set as it is *now*, so a revoked
permission takes effect on the next batch. Labels arrive as the ``_label`` struct of signed
64-bit words (see ``boxes.labels``); here they are read as unsigned words.

>>> mask = readable_mask(["in1", "in2"], ["in1"])
>>> delivered = secfilter(batch, mask)        # rows labelled {in1} only
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pyarrow as pa

from boxes.labels import LABEL_COLUMN, WORD_BITS, word_count

Batch = pa.Table | pa.RecordBatch


def readable_mask(inputs: Sequence[str], readable: Iterable[str]) -> np.ndarray:
    """Unsigned label words with bit i set iff ``inputs[i]`` is readable."""
    allowed = set(readable)
    mask = np.zeros(word_count(len(inputs)), dtype=np.uint64)
    for i, name in enumerate(inputs):
        if name in allowed:
            mask[i // WORD_BITS] |= np.uint64(1) << np.uint64(i % WORD_BITS)
    return mask


def label_words(batch: Batch) -> np.ndarray:
    """The labels of a batch as an ``(rows, words)`` array of unsigned 64-bit words."""
    column = batch.column(LABEL_COLUMN)
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    if column.null_count:
        raise ValueError("a result batch has a NULL label; labels are never NULL")
    words = [np.asarray(column.field(k).to_numpy(zero_copy_only=False), dtype=np.int64)
             for k in range(column.type.num_fields)]
    return np.stack(words, axis=1).view(np.uint64) if words else np.zeros((len(column), 0), np.uint64)


def _readable_rows(labels: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Boolean per row: no label bit outside ``mask``."""
    if labels.shape[1] != len(mask):
        raise ValueError(f"labels have {labels.shape[1]} words but the mask has {len(mask)}")
    return ~np.any(labels & ~mask, axis=1)


def secfilter(batch: Batch, mask: np.ndarray) -> pa.Table:
    """The rows of ``batch`` whose label is a subset of ``mask``."""
    table = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
    keep = _readable_rows(label_words(table), np.asarray(mask, dtype=np.uint64))
    return table.filter(pa.array(keep, type=pa.bool_()))


def deliveries(batch: Batch, masks: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Row indexes to deliver to each of many subscribers, testing each distinct label once.

    A batch usually carries few distinct labels and subscribers share few distinct readable
    sets, so the subset test runs once per (distinct label, distinct mask) and the answer is
    spread back to the rows; a subscriber who may read every label (or none) costs O(1).
    """
    labels = label_words(batch)
    distinct, inverse = distinct_labels(labels)
    everything = np.arange(len(labels))
    answers: dict[bytes, np.ndarray] = {}
    out = []
    for mask in masks:
        mask = np.asarray(mask, dtype=np.uint64)
        key = mask.tobytes()
        if key not in answers:
            ok = _readable_rows(distinct, mask)
            answers[key] = (everything if ok.all() else
                            np.flatnonzero(ok[inverse]) if ok.any() else everything[:0])
        out.append(answers[key])
    return out


def distinct_labels(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``labels`` and, per row, the index of its distinct label.

    Word by word with 1-D sorts (``np.unique(axis=0)`` is many times slower): each word's
    codes are folded into one code per row and re-compressed, so codes stay below the row count.
    A batch whose rows all share one label (the common case: one source, or one combination)
    is answered by a single comparison instead of the sorts.
    """
    codes = np.zeros(len(labels), dtype=np.int64)
    if len(labels) and (labels == labels[0]).all():
        return labels[:1], codes
    for k in range(labels.shape[1]):
        values, word_codes = np.unique(labels[:, k], return_inverse=True)
        codes = codes * len(values) + word_codes.reshape(-1)
        if k:
            codes = np.unique(codes, return_inverse=True)[1].reshape(-1)
    count = int(codes.max()) + 1 if len(codes) else 0
    representative = np.zeros(count, dtype=np.int64)
    representative[codes] = np.arange(len(codes))   # any row of a code will do
    return labels[representative], codes


def label_sources(batch: Batch, inputs: Sequence[str]) -> list[list[str]]:
    """The sorted input names in each row's label (decoded once per distinct label)."""
    distinct, inverse = distinct_labels(label_words(batch))
    bits = np.unpackbits(distinct.astype("<u8").view(np.uint8), axis=1, bitorder="little")
    names = [sorted(inputs[i] for i in np.flatnonzero(row) if i < len(inputs)) for row in bits]
    return [names[i] for i in inverse]
