"""Role masks of any width as columns: one ``bigint`` up to 64 roles, ``W`` words above.

A role's bit (``Snapshot.role_bits``) is any non-negative number; a mask is a Python int. Up to
64 roles (the common case) a mask column is a ``bigint``, as it always was; above, it is an
``array<bigint>`` of ``W`` words, word ``k`` holding bits ``64 k`` to ``64 k + 63`` (each word
a signed long). A governed plan has a fixed width (``Plan.role_words``, recorded when it is
deployed), so its labels' policy words are ``W`` parts each and every box merges them by OR
as before. Reading a column of another width is where roles beyond a width are decided, always
closed: a *granted* mask is cut or padded with 0 (nobody), a *denied* word padded with -1
(everybody): a role the plan has no bit for reads nothing of it, and a subscriber playing only
such a role receives nothing (``readers``: its bits beyond the column's width are dropped).

>>> m = matrix(pa.array([[1, -1], [0, 2]], pa.list_(pa.int64())), 3, -1)
>>> m.tolist()
[[1, -1, -1], [0, 2, -1]]
>>> to_int(words(1 << 100 | 1, 2))
1267650600228229401496703205377
>>> readers(pa.array([-2, 0]), 1 << 70).tolist(), readers(pa.array([-2, 0]), 2).tolist()
([False, False], [False, True])
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

WORD = 64
MAX_ROLE_BITS = 4096  # roles with a bit (catalog migration 0011): 64 words of label at most
_ALL = (1 << WORD) - 1


def width(bits: int) -> int:
    """Words for masks of ``bits`` bits (at least one)."""
    return max(1, -(-bits // WORD))


def width_of(mask: int) -> int:
    """Words the mask needs."""
    return width(mask.bit_length())


def words(mask: int, count: int) -> list[int]:
    """``mask``'s ``count`` low words as signed longs (higher bits are dropped)."""
    out = [(mask >> (WORD * k)) & _ALL for k in range(count)]
    return [w - (1 << WORD) if w >> (WORD - 1) else w for w in out]


def to_int(row) -> int:
    """Words (signed longs, low first) back as a mask."""
    return sum((int(w) & _ALL) << (WORD * k) for k, w in enumerate(row))


def to_ints(rows: np.ndarray) -> list[int]:
    """Each row of ``(rows, W)`` words as a mask (one word: at once, the common case)."""
    if rows.shape[1] == 1:
        return rows[:, 0].astype(np.int64).view(np.uint64).tolist()
    return [to_int(row) for row in rows]


def part(name: str, k: int) -> str:
    """The column of word ``k`` of a policy word ``name`` as an input carries it."""
    return name if k == 0 else f"{name}_{k}"


def parts(name: str, count: int) -> list[str]:
    return [part(name, k) for k in range(count)]


def is_wide(type_: pa.DataType) -> bool:
    return pa.types.is_list(type_) or pa.types.is_large_list(type_)


def matrix(column, count: int, pad: int) -> np.ndarray:
    """A mask column (``bigint`` or ``array<bigint>`` of one length) as ``(rows, count)``
    longs: cut to ``count`` words, or padded with ``pad``."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    rows = len(array)
    if is_wide(array.type):
        lengths = pc.list_value_length(array).to_numpy(zero_copy_only=False)
        have = int(lengths.max(initial=0))
        if (lengths == have).all():
            flat = array.flatten().to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
            found = flat.reshape(rows, have)
        else:  # frames of several widths put together: each row padded as it would be alone
            found = np.array([w + [pad] * (have - len(w)) for w in array.to_pylist()], np.int64)
    else:
        found = array.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)[:, None]
    if found.shape[1] >= count:
        return found[:, :count]
    return np.hstack([found, np.full((rows, count - found.shape[1]), pad, np.int64)])


def width_of_column(column) -> int:
    """How many words a mask column holds (its widest row)."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if not is_wide(array.type) or not len(array):
        return 1
    return max(1, int(pc.max(pc.list_value_length(array)).as_py()))


def column(values: np.ndarray) -> pa.Array:
    """``(rows, W)`` longs as a mask column: a ``bigint`` if ``W`` is 1, else an array."""
    if values.shape[1] == 1:
        return pa.array(values[:, 0], pa.int64())
    rows, count = values.shape
    offsets = pa.array(np.arange(0, rows * count + 1, count, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, pa.array(values.reshape(-1), pa.int64()))


def of_masks(masks, count: int) -> pa.Array:
    """Python int masks as a column of ``count`` words."""
    return column(np.array([words(m, count) for m in masks], np.int64).reshape(-1, count))


def granted_words(denied, mask: int) -> np.ndarray:
    """Per row of a denied column, the roles of ``mask`` it does not deny, as words (bits of
    ``mask`` beyond the column's width count as denied)."""
    count = width_of_column(denied)
    return ~matrix(denied, count, -1) & np.array(words(mask, count), np.int64)


def readers(denied, mask: int) -> np.ndarray:
    """Per row of a denied column, whether some role of ``mask`` is not denied."""
    array = denied.combine_chunks() if isinstance(denied, pa.ChunkedArray) else denied
    if not is_wide(array.type):  # the common case: one word
        (held,) = words(mask, 1)
        return (~array.to_numpy(zero_copy_only=False) & np.int64(held)) != 0
    return np.any(granted_words(array, mask) != 0, axis=1)
