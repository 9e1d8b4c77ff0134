"""CQL's join of two count windows, pure: ISTREAM of ``L [ROWS n] ⋈ R [ROWS m]`` on equal keys.

Each side's window is ``countwindow.CountWindow`` over that side's tuples (the n, resp. m,
greatest by ``(time, arrival)``), so a late tuple enters by its event time and one older than a
full window never enters, exactly as in a count-window aggregate. The join relation at an
instant is every pair of a left and a right tuple in their windows with equal keys (a NULL key
matches nothing); ISTREAM emits the pairs that are new. A pair becomes new only when a tuple
enters its window, so: **a tuple that enters its window is paired with the other side's window
as it is at that moment**; a tuple that does not enter pairs with nothing, and a tuple pushed
out emits nothing (that would be DSTREAM). Each pair is emitted once, when the later of its two
tuples enters.

The order tuples enter in: a stream takes each batch in arrival order, left before right on an
equal arrival (a self-join's tuple that passes both sides' filters enters the left window,
then the right one, where it meets itself: the pair with itself is emitted, as CQL's instants
give, once); a batch run replays its tuples by event time, then arrival, then side. Across
batches, batch order. With both sides cut from one arrival order (a self-join, or streams with
one clock) results do not depend on how the stream is cut into batches
(``tests/boxes/test_countjoin.py`` checks this against a plain-Python reference).

A pair's label is the OR of its two tuples' labels. The tuples of the batch are taken in runs of
one side: a run's tuples all meet the same window of the other side, and ``CountWindow``
advances the run's side at once (vectorized for tuples in order).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from boxes.countwindow import ARRIVAL, TIME, CountWindow, Rows, label_name
from boxes.ranges import range_reduce

_ORDER = "_o"  # a run's tuples numbered in the order they enter (older window rows: -1)


@dataclass(frozen=True)
class CountJoin:
    """``rows``: each side's window size. ``columns``: the columns each side's rows carry (its
    fields, named apart from the other side's); ``keys``: the key columns of each side, in
    pairs that must be equal."""

    rows: tuple[int, int]
    words: int
    columns: tuple[tuple[str, ...], tuple[str, ...]]
    keys: tuple[tuple[str, ...], tuple[str, ...]]
    replay: bool = False

    def side(self, k: int) -> CountWindow:
        return CountWindow(
            self.rows[k], 1, (), self.words, self.replay, carried=(*self.columns[k], _ORDER)
        )

    def empty(self) -> tuple[Rows, Rows]:
        return _unnumbered(self.side(0).empty()), _unnumbered(self.side(1).empty())

    def advance(
        self, windows: tuple[Rows, Rows], batches: tuple[Mapping, Mapping]
    ) -> tuple[tuple[Rows, Rows], Rows]:
        """Feed each side's new tuples (any order; columns ``_t``, ``_a``, label words and the
        side's ``columns``): the new windows and the pairs emitted (both sides' columns, then
        the label words, OR of the pair's)."""
        sides = [self.side(0), self.side(1)]
        names = [[c for c in s.columns if c != _ORDER] for s in sides]
        new = [{c: np.asarray(b[c]) for c in names[k]} for k, b in enumerate(batches)]
        sizes = [len(new[0][TIME]), len(new[1][TIME])]
        side = np.repeat(np.array([0, 1]), sizes)
        arrival = np.concatenate([new[0][ARRIVAL], new[1][ARRIVAL]]).astype(np.int64)
        keys: tuple = (side, arrival)
        if self.replay:
            keys += (np.concatenate([new[0][TIME], new[1][TIME]]).astype(np.int64),)
        order = np.lexsort(keys)
        index = np.where(side == 0, np.arange(len(side)), np.arange(len(side)) - sizes[0])[order]
        in_order = side[order]
        cuts = np.flatnonzero(np.diff(in_order)) + 1
        current = list(windows)
        pairs: list[Rows] = []
        for start, end in zip(
            np.concatenate([[0], cuts]), np.concatenate([cuts, [len(order)]]), strict=True
        ):
            if start == end:
                continue
            k = int(in_order[start])
            run = {c: v[index[start:end]] for c, v in new[k].items()}
            run[_ORDER] = np.arange(end - start, dtype=np.int64)
            window = dict(current[k])
            window[_ORDER] = np.full(len(window[TIME]), -1, dtype=np.int64)
            entered_at = _Entered(self.rows[k])
            after, _, found = sides[k].advance(window, 0, run, entered_at.emit)
            current[k] = _unnumbered(after)
            if _ORDER in found:
                entered = {c: v[found[_ORDER]] for c, v in run.items() if c != _ORDER}
                pairs.append(self._pairs(k, entered, current[1 - k]))
        return (current[0], current[1]), _concat(pairs) if pairs else self._no_pairs()

    def _pairs(self, k: int, entered: Rows, other: Rows) -> Rows:
        """Every pair of an entered tuple of side k and a tuple of the other side's window with
        equal keys (none NULL), in entering order."""
        left, right = (entered, other) if k == 0 else (other, entered)
        li, ri = _matches([left[c] for c in self.keys[0]], [right[c] for c in self.keys[1]], k == 1)
        out: Rows = {c: left[c][li] for c in self.columns[0]}
        out.update({c: right[c][ri] for c in self.columns[1]})
        for w in range(self.words):
            name = label_name(w)
            out[name] = left[name][li].astype(np.int64) | right[name][ri].astype(np.int64)
        return out

    def _no_pairs(self) -> Rows:
        names = [*self.columns[0], *self.columns[1]] + [label_name(w) for w in range(self.words)]
        return {n: np.zeros(0, dtype=np.int64) for n in names}


class _Entered:
    """A ``CountWindow`` emit step that names, for each tuple entering, which run row it is:
    the window at that moment holds it, and it is the run's latest there."""

    def __init__(self, rows: int) -> None:
        self.rows = rows

    def emit(self, seq: Rows, ends: np.ndarray) -> Rows:
        starts = np.maximum(ends - self.rows + 1, 0)
        return {_ORDER: range_reduce(np.maximum, seq[_ORDER], starts, ends, -1)}


def _matches(left: list[np.ndarray], right: list[np.ndarray], right_first: bool):
    """Row indices (left, right) of the pairs with equal keys, none NULL; ordered by the
    entered side's rows (right's if ``right_first``), then the other's. A hash of the other
    side's keys, in plain Python: a stream's runs are often a tuple or two, where building
    DataFrames to merge cost a hundred times more than the pairs."""
    entered, other = (right, left) if right_first else (left, right)
    index: dict[tuple, list[int]] = {}
    for j, key in enumerate(zip(*(c.tolist() for c in other), strict=True)):
        if not any(v is None or v != v for v in key):  # NULL (None or NaN) matches nothing
            index.setdefault(key, []).append(j)
    mine: list[int] = []
    theirs: list[int] = []
    for i, key in enumerate(zip(*(c.tolist() for c in entered), strict=True)):
        for j in index.get(key, ()):
            mine.append(i)
            theirs.append(j)
    ei, oi = np.asarray(mine, dtype=np.int64), np.asarray(theirs, dtype=np.int64)
    return (oi, ei) if right_first else (ei, oi)


def _unnumbered(rows: Rows) -> Rows:
    return {c: v for c, v in rows.items() if c != _ORDER}


def _concat(parts: list[Rows]) -> Rows:
    return {c: np.concatenate([p[c] for p in parts]) for c in parts[0]}
