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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from boxes import labels
from boxes.ranges import range_reduce

TIME, ARRIVAL = "_t", "_a"
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

    @property
    def columns(self) -> list[str]:
        """The columns of a window's rows, in order."""
        values = sorted({i for _, i in self.functions if i is not None})
        return (
            [TIME, ARRIVAL]
            + [label_name(k) for k in range(self.words)]
            + [value_name(i) for i in values]
        )

    def empty(self) -> pd.DataFrame:
        return pd.DataFrame({c: pd.Series([], dtype="int64") for c in self.columns})

    def advance(
        self, window: pd.DataFrame, pending: int, batch: pd.DataFrame
    ) -> tuple[pd.DataFrame, int, pd.DataFrame]:
        """Feed ``batch`` (one group's new tuples, any order) to the window.

        ``window``: the group's window (sorted by (time, arrival), at most ``rows`` rows);
        ``pending``: tuples entered since the last result. Returns the new window, the new
        pending count and the results (``window_start``, ``window_end`` as the time unit of
        ``_t``, one column per aggregate named ``agg{i}``, and the label words).
        """
        order = [TIME, ARRIVAL] if self.replay else [ARRIVAL]
        batch = batch[self.columns].sort_values(order, kind="stable").reset_index(drop=True)
        times, arrivals = batch[TIME].to_numpy(), batch[ARRIVAL].to_numpy()
        # in_order[k]: row k is greater than row k - 1, so it may continue a run.
        in_order = np.ones(len(batch), dtype=bool)
        in_order[1:] = (times[1:] > times[:-1]) | (
            (times[1:] == times[:-1]) & (arrivals[1:] > arrivals[:-1])
        )
        breaks = np.flatnonzero(~in_order)
        results: list[pd.DataFrame] = []
        i = 0
        while i < len(batch):
            if len(window) == 0 or _greater(batch, i, window, len(window) - 1):
                after = int(np.searchsorted(breaks, i, side="right"))
                end = int(breaks[after]) if after < len(breaks) else len(batch)
                window, pending = self._run(window, pending, batch.iloc[i:end], results)
                i = end
            else:
                window, pending = self._insert(window, pending, batch.iloc[i : i + 1], results)
                i += 1
        out = pd.concat(results, ignore_index=True) if results else self._no_results()
        return window.reset_index(drop=True), pending, out

    def _run(self, window, pending, run, results):
        """Tuples each greater than all before them: all enter; results from ranges."""
        seq = pd.concat([window, run], ignore_index=True)
        first = len(window)
        steps = np.arange(1, len(run) + 1)
        ends = first + np.flatnonzero((pending + steps) % self.slide == 0)
        if len(ends):
            results.append(self.aggregate(seq, ends))
        return seq.iloc[max(0, len(seq) - self.rows) :], (pending + len(run)) % self.slide

    def _insert(self, window, pending, row, results):
        """One tuple older than the window's newest: it takes its place by (time, arrival)."""
        t, a = row[TIME].iat[0], row[ARRIVAL].iat[0]
        wt, wa = window[TIME].to_numpy(), window[ARRIVAL].to_numpy()
        at = int(np.count_nonzero((wt < t) | ((wt == t) & (wa <= a))))
        if at == 0 and len(window) >= self.rows:
            return window, pending  # older than a full window: it never enters
        window = pd.concat([window.iloc[:at], row, window.iloc[at:]], ignore_index=True)
        window = window.iloc[max(0, len(window) - self.rows) :].reset_index(drop=True)
        pending += 1
        if pending == self.slide:
            results.append(self.aggregate(window, np.array([len(window) - 1])))
            pending = 0
        return window, pending

    def aggregate(self, seq: pd.DataFrame, ends: np.ndarray) -> pd.DataFrame:
        """The results of the windows ``seq[max(0, end - rows + 1) : end + 1]`` for each end."""
        starts = np.maximum(ends - self.rows + 1, 0)
        times = seq[TIME].to_numpy()
        out: dict[str, object] = {"window_start": times[starts], "window_end": times[ends]}
        for k, (function, arg) in enumerate(self.functions):
            values = None if arg is None else seq[value_name(arg)]
            out[f"agg{k}"] = _aggregate(function, values, starts, ends)
        for k in range(self.words):
            words = seq[label_name(k)].to_numpy(dtype=np.int64)
            out[label_name(k)] = labels.merge_ranges(words, starts, ends)
        return pd.DataFrame(out)

    def _no_results(self) -> pd.DataFrame:
        names = ["window_start", "window_end"]
        names += [f"agg{k}" for k in range(len(self.functions))]
        names += [label_name(k) for k in range(self.words)]
        return pd.DataFrame({n: [] for n in names})


def _greater(batch: pd.DataFrame, i: int, window: pd.DataFrame, j: int) -> bool:
    """Is batch row i after window row j in (time, arrival) order?"""
    bt, ba = batch[TIME].iat[i], batch[ARRIVAL].iat[i]
    wt, wa = window[TIME].iat[j], window[ARRIVAL].iat[j]
    return bool(bt > wt or (bt == wt and ba > wa))


def _prefix(values: np.ndarray) -> np.ndarray:
    return np.concatenate([np.zeros(1, dtype=values.dtype), np.cumsum(values)])


def _aggregate(function: str, values: pd.Series | None, starts, ends) -> np.ndarray:
    """One aggregate over each range [start, end] of ``values`` (NULLs skipped, as Spark's)."""
    if values is None:
        return (ends - starts + 1).astype(np.int64)
    present = values.notna().to_numpy()
    counts = _prefix(present.astype(np.int64))
    count = counts[ends + 1] - counts[starts]
    if function == "count":
        return count
    if function in ("min", "max"):
        return _min_max(function, values, present, starts, ends, count)
    array = values.to_numpy()
    if array.dtype.kind in "iu":
        # Exact: prefix sums wrap modulo 2**64 but differences of them do not lose a bit; a
        # window whose true sum leaves the long range is NULL (Spark's try_sum).
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
    floats = np.where(present, array.astype(np.float64), 0.0)
    # pandas' rolling sum is compensated (Kahan), so a window's sum does not inherit the
    # rounding of a long prefix, as a difference of prefix sums would.
    rolling = pd.Series(floats).rolling(_span(starts, ends), min_periods=1).sum().to_numpy()
    total_f = np.where(count > 0, rolling[ends], np.nan)
    if function == "sum":
        return total_f
    with np.errstate(invalid="ignore", divide="ignore"):
        return total_f / count


def _span(starts, ends) -> int:
    """The (common) length of the ranges; the first ones may be shorter, at the sequence's start."""
    return int((ends - starts).max()) + 1 if len(ends) else 1


def _min_max(function, values: pd.Series, present, starts, ends, count) -> np.ndarray:
    array = values.to_numpy()
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
        found = range_reduce(ufunc, numbers, starts, ends, fill)
        result = found.view(array.dtype) if is_time else found
        if numbers.dtype.kind != "f":
            result = result.astype(object)
            result[count == 0] = None
        return result
    pick = min if function == "min" else max
    return np.array(
        [
            pick((v for v in array[s : e + 1] if not pd.isna(v)), default=None)
            for s, e in zip(starts, ends, strict=True)
        ],
        dtype=object,
    )
