"""CQL's ``[ROWS N] ... GROUP BY k``: the stream's N most recent tuples, then grouped, pure.

Not ``[PARTITION BY k ROWS N]`` (the N most recent tuples *of each group*, ``countwindow.py``
keyed by group): here one window holds the whole stream's last N tuples, whatever their group,
and a group's aggregates are over its tuples among them. The window itself is
``countwindow.CountWindow`` over the whole stream, with the group keys carried in its rows.

CQL's ISTREAM of the grouped relation: at each result instant (every ``slide`` tuples that
enter), the relation is one row per group present in the window; the rows emitted are those
not in the relation of the previous instant, i.e. the groups that are new or whose aggregates
changed. A group that leaves the window emits nothing (that would be DSTREAM). So the state is
the window and the last relation (at most N rows). Each result instant groups the window once
(O(N)): this costs more per tuple than a partitioned window, whose results are ranges.

A row's label is the OR of the labels of its group's tuples in the window.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from boxes import labels
from boxes.countwindow import KEEP, TIME, CountWindow, Rows, _aggregate, label_name


def key_name(k: int) -> str:
    return f"_g{k}"


@dataclass(frozen=True)
class GroupedCountWindow:
    """``window`` must carry the ``keys`` group-key columns (``_g0``, ...)."""

    window: CountWindow
    keys: int

    def __post_init__(self) -> None:
        assert self.window.carried == tuple(key_name(k) for k in range(self.keys))

    def empty_relation(self) -> Rows:
        return self._empty()

    def advance(
        self, window: Rows, pending: int, relation: Rows, batch: Mapping
    ) -> tuple[Rows, int, Rows, Rows]:
        """Feed ``batch`` (new tuples of the whole stream): the new window, pending count and
        relation, and the rows emitted (group keys, ``window_start``/``window_end`` of the
        whole window, ``agg{i}``, label words)."""
        step = _Istream(self, relation)
        window, pending, results = self.window.advance(window, pending, batch, step.emit)
        if not len(results["window_end"]) or key_name(0) not in results:
            results = self._empty()
        return window, pending, step.relation, results

    def group(self, rows: Rows) -> Rows:
        """The relation of one window: a row per group, its aggregates and label, over the
        window's tuples that satisfy the box's ``where`` (CQL: window, then WHERE, then GROUP
        BY), so a group with none of them has no row."""
        if self.window.where:
            keep = rows[KEEP].astype(bool)
            rows = {c: v[keep] for c, v in rows.items()}
            if not keep.any():
                return self._empty()
        codes = [
            pd.factorize(rows[key_name(k)], use_na_sentinel=False)[0] for k in range(self.keys)
        ]
        groups = np.unique(np.stack(codes), axis=1, return_inverse=True)[1].reshape(-1)
        order = np.argsort(groups, kind="stable")
        sorted_rows = {c: v[order] for c, v in rows.items()}
        bounds = np.flatnonzero(np.diff(groups[order])) + 1
        starts = np.concatenate([[0], bounds]).astype(np.int64)
        ends = np.concatenate([bounds - 1, [len(order) - 1]]).astype(np.int64)
        out: Rows = {key_name(k): sorted_rows[key_name(k)][starts] for k in range(self.keys)}
        for k, (function, arg) in enumerate(self.window.functions):
            values = None if arg is None else sorted_rows[f"_v{arg}"]
            out[f"agg{k}"] = _aggregate(function, values, starts, ends)
        for k in range(self.window.words):
            words = sorted_rows[label_name(k)].astype(np.int64)
            out[label_name(k)] = labels.merge_ranges(words, starts, ends)
        return out

    def _empty(self) -> Rows:
        names = [key_name(k) for k in range(self.keys)] + ["window_start", "window_end"]
        names += [f"agg{k}" for k in range(len(self.window.functions))]
        names += [label_name(k) for k in range(self.window.words)]
        return {n: np.zeros(0, dtype=np.int64) for n in names}


class _Istream:
    """One ``advance``: the relation so far, and the rows each result instant emits."""

    def __init__(self, spec: GroupedCountWindow, relation: Rows) -> None:
        self.spec = spec
        self.relation = relation

    def emit(self, seq: Rows, ends: np.ndarray) -> Rows:
        rows = self.spec.window.rows
        parts = []
        for end in ends:
            start = max(0, int(end) - rows + 1)
            window = {c: v[start : int(end) + 1] for c, v in seq.items()}
            current = self.spec.group(window)
            new = _not_in(current, self.relation, self.spec)
            times = window[TIME]
            count = int(new.sum())
            part = {c: v[new] for c, v in current.items()}
            part["window_start"] = np.full(count, times[0], dtype=times.dtype)
            part["window_end"] = np.full(count, times[-1], dtype=times.dtype)
            parts.append(part)
            self.relation = current
        return {c: np.concatenate([p[c] for p in parts]) for c in parts[0]}


def _not_in(current: Rows, previous: Rows, spec: GroupedCountWindow) -> np.ndarray:
    """Which rows of ``current`` the previous relation does not have (same keys, aggregates
    and label)."""
    names = [c for c in current if c not in ("window_start", "window_end")]
    before = {_row(previous, names, i) for i in range(len(previous[key_name(0)]))}
    return np.array(
        [_row(current, names, i) not in before for i in range(len(current[key_name(0)]))],
        dtype=bool,
    )


def _row(rows: Rows, names: list[str], i: int) -> tuple[Any, ...]:
    """A row as a hashable tuple; NULL and NaN compare equal to themselves."""
    return tuple(None if pd.isna(v := rows[n][i]) else _plain(v) for n in names)


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value
