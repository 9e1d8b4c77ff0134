"""Reductions over many ranges of one array at once, for count windows' min, max and label OR.

>>> import numpy as np
>>> range_reduce(np.maximum, np.array([3, 1, 4, 1, 5]), np.array([0, 1, 2]), np.array([1, 3, 4]), 0)
array([3, 4, 5])
"""

from __future__ import annotations

import numpy as np


def range_reduce(ufunc, values: np.ndarray, starts: np.ndarray, ends: np.ndarray, fill):
    """``ufunc.reduce(values[s : e + 1])`` for each (s, e), for an idempotent ufunc (OR, min,
    max): a sparse table of power-of-two spans answers every range with two lookups, so the
    cost is O(len(values) log(longest range)) however much the ranges overlap. ``fill`` is the
    ufunc's identity (it pads the table's tail and is never part of an answer)."""
    if len(ends) == 0:
        return values[:0]
    lengths = ends - starts + 1
    table = [values]
    for level in range(1, int(lengths.max()).bit_length()):
        half = 1 << (level - 1)
        prev = table[-1]
        nxt = np.full_like(prev, fill)
        nxt[: len(prev) - half] = ufunc(prev[: len(prev) - half], prev[half:])
        table.append(nxt)
    k = np.log2(lengths).astype(np.int64)  # floor, exact for powers of two
    stacked = np.stack(table)
    return ufunc(stacked[k, starts], stacked[k, ends - (1 << k) + 1])
