"""Count windows, pure: the N most recent tuples of a group and their aggregates, on Arrow-sized
batches with numpy (no Spark, no row-at-a-time loop for tuples that arrive in order).

CQL's ``[ROWS N]``: the window holds the N tuples with the greatest event time, ties broken by
arrival order, so the order key is ``(time, arrival)``. A tuple *enters* the window unless the
window is full and the tuple is older than all of it (it would leave at once); with a slide of M,
a result is emitted after every M-th entering tuple (M = 1: after each one), over the window as
it is at that moment. A tuple older than the newest one in the window (a late tuple) enters in
its place by event time and pushes the oldest out. A result carries the oldest and newest event
time of its window (``window_start``, ``window_end``), the aggregates, and the OR of the labels
of every tuple in the window: it depends on all of them.

Results do not depend on how the stream is cut into batches: ``advance`` on the whole stream
equals ``advance`` on any split of it, state carried between (``tests/boxes/test_countwindow.py``
checks this and the results against a plain-Python reference with hypothesis).

Tuples in order (each greater than the window's newest) take the vectorized path: the window
and the batch form one sequence, and each result is a range of it: counts and sums from prefix
sums, min, max and the label OR from a sparse table. A late tuple is inserted on its own.
Windows, batches and results are plain numpy columns (``Rows``): the step runs once per group
and batch, so per-call overhead (pandas' is tens of microseconds an operation) is what counts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from boxes import labels
from boxes.ranges import range_reduce

TIME, ARRIVAL = "_t", "_a"
KEEP = "_k"  # whether a window's tuple satisfies the box's ``where`` (is aggregated)
Rows = dict[str, np.ndarray]  # columns of equal length, by name
# The results of the windows ending at each of ``ends`` in a sequence of rows.
Emit = Callable[[Rows, np.ndarray], Rows]
_INT64_MAX = float(2**63)


def label_name(k: int) -> str:
    return f"_l{k}"


def value_name(k: int) -> str:
    return f"_v{k}"


@dataclass(frozen=True)
class CountWindow:
    """What one count-window aggregate computes.

    ``functions``: per output aggregate, its function (count, sum, avg, min, max) and the index
    of its argument column (``_v{i}``), or None for ``count()``. ``words``: label words.
    """

    rows: int
    slide: int
    functions: tuple[tuple[str, int | None], ...]
    words: int
    # A batch run has every tuple at once: it replays them in event-time order (ties by arrival),
    # as if each had arrived in order. A stream takes each batch in arrival order.
    replay: bool = False
    # Columns a window's rows keep without aggregating them (a grouped window's keys).
    carried: tuple[str, ...] = ()
    # CQL's WHERE after the window: rows carry ``_k`` and only those with it are aggregated;
    # the window itself still holds the last ``rows`` tuples, whatever ``_k``.
    where: bool = False
    # Each window is one group's (PARTITION BY): with ``where``, a window none of whose
    # tuples satisfy it has no result, as its group is not in the filtered relation.
    keyed: bool = False

    @property
    def columns(self) -> list[str]:
        """The columns of a window's rows, in order."""
        values = sorted({i for _, i in self.functions if i is not None})
        return (
            [TIME, ARRIVAL]
            + [label_name(k) for k in range(self.words)]
            + [value_name(i) for i in values]
            + list(self.carried)
            + ([KEEP] if self.where else [])
        )

    def empty(self) -> Rows:
        return {c: np.zeros(0, dtype=np.int64) for c in self.columns}

    def advance(
        self, window: Rows, pending: int, batch: Mapping, emit: Emit | None = None
    ) -> tuple[Rows, int, Rows]:
        """Feed ``batch`` (one group's new tuples, any order; columns by name, a DataFrame or
        a dict of arrays) to the window.

        ``window``: the group's window (sorted by (time, arrival), at most ``rows`` rows);
        ``pending``: tuples entered since the last result. Returns the new window, the new
        pending count and the results (``window_start``, ``window_end`` as the time unit of
        ``_t``, one column per aggregate named ``agg{i}``, and the label words). ``emit``
        computes the results of windows (default ``aggregate``: one row per window).
        """
        emit = emit or self.aggregate
        columns = {c: np.asarray(batch[c]) for c in self.columns}
        times, arrivals = columns[TIME], columns[ARRIVAL]
        order = (
            np.lexsort((arrivals, times)) if self.replay else np.argsort(arrivals, kind="stable")
        )
        columns = {c: v[order] for c, v in columns.items()}
        times, arrivals = columns[TIME], columns[ARRIVAL]
        # in_order[k]: row k is greater than row k - 1, so it may continue a run.
        in_order = np.ones(len(times), dtype=bool)
        in_order[1:] = (times[1:] > times[:-1]) | (
            (times[1:] == times[:-1]) & (arrivals[1:] > arrivals[:-1])
        )
        breaks = np.flatnonzero(~in_order)
        results: list[Rows] = []
        i = 0
        while i < len(times):
            if _size(window) == 0 or _after(columns, i, window):
                after = int(np.searchsorted(breaks, i, side="right"))
                end = int(breaks[after]) if after < len(breaks) else len(times)
                run = _slice(columns, i, end)
                window, pending = self._run(window, pending, run, results, emit)
                i = end
            else:
                row = _slice(columns, i, i + 1)
                window, pending = self._insert(window, pending, row, results, emit)
                i += 1
        return window, pending, _concat(results) if results else self._no_results()

    def _run(self, window: Rows, pending: int, run: Rows, results: list[Rows], emit: Emit):
        """Tuples each greater than all before them: all enter; results from ranges."""
        seq = _concat([window, run])
        first, count = _size(window), _size(run)
        steps = np.arange(1, count + 1)
        ends = first + np.flatnonzero((pending + steps) % self.slide == 0)
        if len(ends):
            results.append(emit(seq, ends))
        size = _size(seq)
        return _slice(seq, max(0, size - self.rows), size), (pending + count) % self.slide

    def _insert(self, window: Rows, pending: int, row: Rows, results: list[Rows], emit: Emit):
        """One tuple older than the window's newest: it takes its place by (time, arrival)."""
        t, a = row[TIME][0], row[ARRIVAL][0]
        wt, wa = window[TIME], window[ARRIVAL]
        at = int(np.count_nonzero((wt < t) | ((wt == t) & (wa <= a))))
        size = _size(window)
        if at == 0 and size >= self.rows:
            return window, pending  # older than a full window: it never enters
        window = _concat([_slice(window, 0, at), row, _slice(window, at, size)])
        window = _slice(window, max(0, size + 1 - self.rows), size + 1)
        pending += 1
        if pending == self.slide:
            results.append(emit(window, np.array([_size(window) - 1])))
            pending = 0
        return window, pending

    def aggregate(self, seq: Rows, ends: np.ndarray) -> Rows:
        """The results of the windows ``seq[max(0, end - rows + 1) : end + 1]`` for each end."""
        starts = np.maximum(ends - self.rows + 1, 0)
        times = seq[TIME]
        out: Rows = {"window_start": times[starts], "window_end": times[ends]}
        keep = seq[KEEP].astype(bool) if self.where else None
        for k, (function, arg) in enumerate(self.functions):
            values = None if arg is None else seq[value_name(arg)]
            out[f"agg{k}"] = _aggregate(function, values, starts, ends, keep)
        for k in range(self.words):
            words = seq[label_name(k)].astype(np.int64)
            out[label_name(k)] = labels.merge_ranges(words, starts, ends)
        if keep is not None and self.keyed:
            present = _aggregate("count", None, starts, ends, keep) > 0
            out = {c: v[present] for c, v in out.items()}
        return out

    def _no_results(self) -> Rows:
        names = ["window_start", "window_end"]
        names += [f"agg{k}" for k in range(len(self.functions))]
        names += [label_name(k) for k in range(self.words)]
        return {n: np.zeros(0, dtype=np.int64) for n in names}


def _size(rows: Rows) -> int:
    return len(next(iter(rows.values())))


def _slice(rows: Rows, start: int, end: int) -> Rows:
    return {c: v[start:end] for c, v in rows.items()}


def _concat(parts: list[Rows]) -> Rows:
    """The rows of ``parts`` in order; empty parts (whose columns have no real type: an empty
    window) are left out, so a column keeps its batches' type (times, strings)."""
    kept = [p for p in parts if _size(p)] or parts[:1]
    return {c: np.concatenate([p[c] for p in kept]) for c in kept[0]}


def _after(batch: Rows, i: int, window: Rows) -> bool:
    """Is batch row i after the window's newest row in (time, arrival) order?"""
    bt, ba = batch[TIME][i], batch[ARRIVAL][i]
    wt, wa = window[TIME][-1], window[ARRIVAL][-1]
    return bool(bt > wt or (bt == wt and ba > wa))


def _prefix(values: np.ndarray) -> np.ndarray:
    return np.concatenate([np.zeros(1, dtype=values.dtype), np.cumsum(values)])


def _aggregate(
    function: str, values: np.ndarray | None, starts, ends, keep: np.ndarray | None = None
) -> np.ndarray:
    """One aggregate over each range [start, end] of ``values`` (NULLs skipped, as Spark's),
    of the rows ``keep`` marks (all when None); ``values`` None: ``count()``."""
    if values is None:
        if keep is None:
            return (ends - starts + 1).astype(np.int64)
        values = keep
    present = ~pd.isna(values)
    if keep is not None:
        present = present & keep
    counts = _prefix(present.astype(np.int64))
    count = counts[ends + 1] - counts[starts]
    if function == "count":
        return count
    if function in ("min", "max"):
        return _min_max(function, values, present, starts, ends, count)
    array = values
    if array.dtype.kind in "iu":
        # Exact: prefix sums wrap modulo 2**64 but differences of them do not lose a bit; a
        # window whose true sum leaves the long range is NULL (Spark's try_sum).
        array = np.where(present, array, 0)
        sums = _prefix(array.astype(np.int64))
        total = (sums[ends + 1] - sums[starts]).astype(object)
        rough = _prefix(array.astype(np.float64))
        overflow = np.abs(rough[ends + 1] - rough[starts]) >= _INT64_MAX
        total[overflow | (count == 0)] = None
        if function == "sum":
            return total
        return np.array(
            [None if s is None else s / c for s, c in zip(total, count, strict=True)], dtype=object
        )
    floats = _prefix(np.where(present, array.astype(np.float64), 0.0))
    # A difference of prefix sums: the prefix starts at the window's oldest row, so it spans
    # one batch and a window, and its rounding stays that of a sum of that many doubles.
    total_f = np.where(count > 0, floats[ends + 1] - floats[starts], np.nan)
    if function == "sum":
        return total_f
    with np.errstate(invalid="ignore", divide="ignore"):
        return total_f / count


def _min_max(function, values: np.ndarray, present, starts, ends, count) -> np.ndarray:
    array = values
    if array.dtype.kind in "iuf" or (array.dtype.kind == "M" and present.all()):
        is_time = array.dtype.kind == "M"
        numbers = array.view(np.int64) if is_time else array
        ufunc: Any
        if numbers.dtype.kind == "f":
            ufunc, fill = (np.fmin, np.nan) if function == "min" else (np.fmax, np.nan)
        else:
            info = np.iinfo(np.int64)
            ufunc, fill = (np.minimum, info.max) if function == "min" else (np.maximum, info.min)
            numbers = numbers.astype(np.int64)
        # Rows left out (``where``) take the fill, which min/max pass over; a double's NULL is
        # NaN, which fmin/fmax skip, and a range of NaNs answers NaN: NULL. Ints and these
        # times have no NULLs: a range with no row kept is NULL.
        found = range_reduce(ufunc, np.where(present, numbers, fill), starts, ends, fill)
        found = found.view(array.dtype) if is_time else found
        if numbers.dtype.kind != "f" and not count.all():
            found = found.astype(object)
            found[count == 0] = None
        return found
    pick = min if function == "min" else max
    return np.array(
        [
            pick(array[s : e + 1][present[s : e + 1]], default=None)
            for s, e in zip(starts, ends, strict=True)
        ],
        dtype=object,
    )
