"""Policy assembly and the Security Shield of seed 003 (Figure 10, Theorem 5.1), pure.

One shield per stream sees that stream's sps and tuples in the order they were logged. Its
state is the current policy and the *horizon*: the newest policy timestamp seen so far, from an
sp or from a tuple's stamp. ``admit_batch`` takes a batch's tuple stamps and the sps among them
and returns the next state and which policy governs each tuple; no I/O, so a replay of the log
decides exactly as the first pass did.

* Consecutive sps with one timestamp form one policy (an *sp batch*); a newer timestamp starts
  a new policy and empties the current one (Figure 10, line 3; Theorem 5.1, case 3).
* The first tuple after a batch seals it: the policy is *complete* iff its sps are exactly
  ``sn = 1 .. csn`` (no gap, none beyond, no two different sps with one ``sn``) and the tuple's
  stamp is ``(ts, csn)`` (lines 7-10, case 1a). Otherwise the policy is emptied and the tuple
  denied (line 16, case 1b), as is every tuple until a newer policy arrives (line 6).
* A tuple whose stamp is not the current policy's, older or newer, empties it (line 16,
  case 2); a newer stamp also moves the horizon, so that policy's sps, arriving after their
  tuple, are discarded (case 2's last sentence).
* An sp older than the horizon, or of the horizon's policy once that policy is sealed or
  emptied, is late and discarded (line 4), also after the current policy was emptied (where
  Figure 10's ``L.CP.ts = 0`` test would take it: docs/punctuations.md).

The rules are applied to a whole batch at once, as arrays, not sp by sp (one sp per tuple would
cost several Python steps per tuple); the batch comes as columns (``Stamps``: its tuples'
stamps; ``SpsAt``: its sps with the row each comes before), and each sp's content was numbered
when it was read (``Sp.content_id``), so the only Python step per sp left is reading its
``ts`` and ``sn`` and its content's number. The horizon is a running maximum over the batch's
timestamps; a run of sps (no tuple among them) leaves an open batch iff its newest timestamp is
newer than the horizon before it, and that batch is its sps of that timestamp; a tuple is
granted iff it and every tuple since the policy it falls under was sealed name that policy.
``tests/boxes/punctuations/figure10.py`` keeps the rules item by item, as the reference this is
tested against.

``SecurityShield`` is Figure 10 whole (roles APR, flag PFF, the policy sent once before the
first tuple it lets through), for the paper's examples; the server decides labels instead
(``decision.py``) and tests the roles at delivery.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from boxes.punctuations.model import NO_SPS, NO_STAMPS, Sp, SpsAt, Stamp, Stamps, from_json


@dataclass(frozen=True)
class Policy:
    """A complete policy: its timestamp and its sps ``sn = 1 .. csn`` in order."""

    ts: int
    sps: tuple[Sp, ...]

    @property
    def csn(self) -> int:
        return len(self.sps)

    @property
    def stamp(self) -> Stamp:
        return Stamp(self.ts, self.csn)


@dataclass(frozen=True)
class Batch:
    """An open sp batch: sps of one timestamp, one per ``sn`` in the order they came, no tuple
    after them yet; ``conflict``: a different sp came with a number already there."""

    ts: int
    sps: tuple[Sp, ...]
    conflict: bool = False


@dataclass(frozen=True)
class ShieldState:
    horizon: int = 0
    batch: Batch | None = None  # being collected: no tuple since its first sp
    current: Policy | None = None  # sealed and complete: governs the tuples of its segment


EMPTY = ShieldState()


def state_to_json(state: ShieldState) -> dict:
    """A shield's state as JSON (the ingestion log snapshots it at each new segment, so a log
    whose oldest segments were dropped still rebuilds it); ``state_from_json`` reads it back."""
    batch, current = state.batch, state.current
    return {
        "horizon": state.horizon,
        "batch": None
        if batch is None
        else {"ts": batch.ts, "sps": [s.to_json() for s in batch.sps], "conflict": batch.conflict},
        "current": None
        if current is None
        else {"ts": current.ts, "sps": [s.to_json() for s in current.sps]},
    }


def state_from_json(value: dict) -> ShieldState:
    batch, current = value["batch"], value["current"]
    return ShieldState(
        int(value["horizon"]),
        None
        if batch is None
        else Batch(
            int(batch["ts"]), tuple(from_json(s) for s in batch["sps"]), bool(batch["conflict"])
        ),
        None
        if current is None
        else Policy(int(current["ts"]), tuple(from_json(s) for s in current["sps"])),
    )


class Admitted:
    """Which policy governs each tuple of a batch: ``rows[i]`` is ``k`` for the batch's
    ``k``-th policy (``policy(k)``; 0: the one current before the batch), -1 when tuple ``i``
    is denied. A policy is built only when asked for (at one sp per tuple, one per tuple)."""

    def __init__(
        self,
        rows: np.ndarray,
        before: Policy | None,
        sps: Sequence[Sp],
        ts: np.ndarray,
        members: np.ndarray,
        bounds: np.ndarray,
    ) -> None:
        self.rows = rows
        self._sps, self._ts, self._members, self._bounds = sps, ts, members, bounds
        self._built: dict[int, Policy | None] = {0: before}

    def policy(self, k: int) -> Policy | None:
        """The ``k``-th policy: its sps in ``sn`` order (None: it was not complete)."""
        if k not in self._built:
            low, high = self._bounds[k - 1], self._bounds[k]
            sps = tuple(self._sps[j] for j in self._members[low:high].tolist())
            self._built[k] = Policy(int(self._ts[k]), sps) if sps else None
        return self._built[k]

    def governing(self) -> list[Policy | None]:
        """Each tuple's policy (None: denied)."""
        return [None if k < 0 else self.policy(k) for k in self.rows.tolist()]

    def kinds(self) -> tuple[np.ndarray, list[Policy]]:
        """Each tuple's policy as an index into a list of policies (-1: denied), one per set
        of sp contents (``Sp.content_id``): such policies decide alike, so a caller compiles
        or looks up each of those once, not once per policy."""
        granted = self.rows >= 0
        rows = self.rows[granted]  # nondecreasing: a later tuple has a later policy, or none
        used = rows[np.concatenate(([True], rows[1:] != rows[:-1]))[: len(rows)]]
        new = used[used > 0]
        codes = _numbered_as_they_come(self._contents(new))
        if len(new) < len(used):  # the policy current before the batch: a kind of its own
            codes = np.concatenate(([0], codes + 1))
        firsts = np.unique(codes, return_index=True)[1]  # codes are 0, 1, ... as they come
        lookup = np.full(len(self._bounds), -1, np.int64)
        lookup[used] = codes
        kinds = np.where(granted, lookup[self.rows], -1)
        return kinds, [p for n in firsts.tolist() if (p := self.policy(int(used[n]))) is not None]

    def _contents(self, policies: np.ndarray) -> np.ndarray:
        """A number per policy (``policies``: indices of the batch's own), equal for policies
        whose sps have equal contents in ``sn`` order."""
        low, high = self._bounds[policies - 1], self._bounds[policies]
        if bool(np.all(high - low == 1)):  # one sp each, the common case: its content's number
            return np.array([self._sps[j].content_id for j in self._members[low].tolist()])
        seen: dict[tuple[int, ...], int] = {}
        return np.array(
            [
                seen.setdefault(
                    tuple(self._sps[j].content_id for j in self._members[a:b].tolist()), len(seen)
                )
                for a, b in zip(low.tolist(), high.tolist(), strict=True)
            ],
            np.int64,
        )


def _numbered_as_they_come(keys: np.ndarray) -> np.ndarray:
    """``keys`` renumbered 0, 1, ... in the order each first appears."""
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    rank = np.empty(len(first), np.int64)
    rank[np.argsort(first)] = np.arange(len(first))
    return rank[inverse.reshape(-1)]


def admit_batch(
    state: ShieldState, stamps: Stamps, sps_at: SpsAt = NO_SPS
) -> tuple[ShieldState, Admitted]:
    """The state after a batch and which policy governs each of its tuples. ``stamps``: its
    tuples' stamps, in order; ``sps_at``: the sps among them, in order, each with the row it
    came before. The batch decides as its items would one by one
    (``tests/boxes/punctuations/figure10.py``)."""
    n = len(stamps)
    horizon, opened = state.horizon, state.batch
    sps, sp_at = sps_at.sps, sps_at.at
    if opened is not None and (sps or n):  # its sps come again, just after their time
        if opened.ts != horizon or not opened.sps:
            raise ValueError("an open sp batch is of the horizon's timestamp and holds sps")
        sps = [*opened.sps, *sps]
        sp_at = np.concatenate((np.zeros(len(opened.sps), np.int64), sp_at))
        horizon -= 1
    if not sps and n == 0:
        none = np.zeros(0, np.int64)
        return state, Admitted(none, state.current, (), none, none, np.zeros(1, np.int64))
    if sps and (sp_at[0] < 0 or sp_at[-1] > n or np.any(sp_at[1:] < sp_at[:-1])):
        raise ValueError("sps_at: rows in order, within the batch")
    sp_ts = np.array([s.ts for s in sps], np.int64)
    sp_sn = np.array([s.sn for s in sps], np.int64)
    t_ts, t_csn = stamps.ts, stamps.csn

    # the horizon before and after each item, the sps of a row before its tuple
    rows, order = np.arange(n), np.arange(len(sps))
    sp_pos = sp_at + order
    t_pos = rows + np.searchsorted(sp_at, rows, side="right")
    items = np.empty(n + len(sps), np.int64)
    items[sp_pos], items[t_pos] = sp_ts, t_ts
    after = np.maximum.accumulate(np.maximum(items, horizon))
    prior = np.concatenate(([horizon], after[:-1]))

    # runs of sps with no tuple among them: one opens a batch iff it brings a timestamp newer
    # than the horizon before it; the batch is its sps of its newest timestamp (the rest late)
    starts = np.concatenate(([True], sp_at[1:] != sp_at[:-1]))[: len(sps)]
    run_of = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)
    last = np.concatenate((first[1:], [len(sps)]))[: len(first)] - 1
    run_at, run_ts = sp_at[first], after[sp_pos[last]]
    opens = run_ts > prior[sp_pos[first]]
    members = np.flatnonzero(opens[run_of] & (sp_ts == run_ts[run_of]))
    kept, count, conflict, low, high = _batches(sps, members, run_of[members], sp_sn, len(first))
    if opened is not None:
        conflict[0] |= opened.conflict and bool(run_ts[0] == opened.ts)
    complete = opens & ~conflict & (count > 0) & (low == 1) & (high == count)

    # the policies: 0 the current one, then one per batch a tuple seals; a tuple is granted
    # iff it and every tuple since its policy was sealed name that policy
    current = state.current
    sealed = np.flatnonzero(opens & (run_at < n))
    p_ts = np.concatenate(([current.ts if current else -1], np.where(complete, run_ts, -1)[sealed]))
    p_csn = np.concatenate(([current.csn if current else -1], count[sealed]))
    p_row = np.concatenate(([0], run_at[sealed]))
    under = np.searchsorted(p_row, rows, side="right") - 1
    bad = np.cumsum((t_ts != p_ts[under]) | (t_csn != p_csn[under]))
    since = np.concatenate(([0], bad))[p_row]
    governed = np.where(bad == since[under], under, -1)
    kept_run = run_of[kept]
    chosen = complete[sealed]
    governs = np.zeros(len(first), bool)
    governs[sealed[chosen]] = True
    policy_sps = kept[governs[kept_run]]
    bounds = np.concatenate(([0], np.cumsum(np.where(chosen, count[sealed], 0))))
    admitted = Admitted(governed, current, sps, p_ts, policy_sps, bounds)

    newest = max(state.horizon, int(after[-1]))
    if len(first) and run_at[-1] == n and opens[-1]:  # the last run's batch stays open
        mine = np.sort(kept[kept_run == len(first) - 1]).tolist()
        batch = Batch(int(run_ts[-1]), tuple(sps[j] for j in mine), bool(conflict[-1]))
        return ShieldState(newest, batch), admitted
    if n:
        current = admitted.policy(int(governed[-1])) if governed[-1] >= 0 else None
    if newest == state.horizon and state.batch is None and current is state.current:
        return state, admitted  # the common case allocates no state
    return ShieldState(newest, None, current), admitted


def _batches(
    sps: Sequence[Sp], members: np.ndarray, run: np.ndarray, sn: np.ndarray, runs: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per run of sps, its batch's members (``members``, in order, of ``run``): the first sp
    of each ``sn`` (``kept``, by run then ``sn``), their count, whether another sp came with one
    of their numbers (``conflict``: a repeat of the same sp is none), the lowest and highest."""
    numbers = sn[members]
    same = run[1:] == run[:-1]
    if not np.all(~same | (numbers[1:] > numbers[:-1])):  # not already by run, then sn
        by = np.lexsort((members, numbers, run))
        members, run, numbers = members[by], run[by], numbers[by]
        same = run[1:] == run[:-1]
    again = np.zeros(len(members), bool)
    again[1:] = same & (numbers[1:] == numbers[:-1])
    conflict = np.zeros(runs, bool)
    if again.any():  # rare: a number repeated, compared sp by sp with its first
        head = np.maximum.accumulate(np.where(again, 0, np.arange(len(members))))
        for j in np.flatnonzero(again).tolist():
            if sps[members[j]] != sps[members[head[j]]]:
                conflict[run[j]] = True
    kept, kept_run = members[~again], run[~again]
    count = np.bincount(kept_run, minlength=runs)
    ends = np.cumsum(count)
    low, high = np.zeros(runs, np.int64), np.full(runs, -1, np.int64)
    some = count > 0
    low[some] = sn[kept[ends[some] - count[some]]]
    high[some] = sn[kept[ends[some] - 1]]
    return kept, count, conflict, low, high


@dataclass(frozen=True)
class Tuple:
    """A data tuple as the shield sees it: stream, values and the stamp of its policy."""

    stream: str
    values: dict
    stamp: Stamp | None


Roles = Callable[[Policy, Tuple], frozenset[str]]


class SecurityShield:
    """Figure 10 with its state ``L``: APR (the roles it lets tuples through for), PFF
    (propagate the policy downstream), the current policy. ``roles(policy, tuple)`` is
    ``t.R``, the roles the policy lets read the tuple. A tuple passes iff ``t.R`` meets APR
    (the text's "no overlap, the tuple is discarded"; docs/punctuations.md)."""

    def __init__(self, apr: Iterable[str], roles: Roles, pff: bool = True) -> None:
        self.apr, self.roles, self.pff = frozenset(apr), roles, pff
        self.state = EMPTY
        self.sent: Policy | None = None  # the policy already propagated (``policy_sent``)

    def push(self, item: Sp | Tuple) -> list[Sp | Tuple]:
        """What the shield sends on for one input: nothing, the tuple, or the policy's sps
        then the tuple."""
        if isinstance(item, Sp):
            self.state, _ = admit_batch(self.state, NO_STAMPS, SpsAt.of([(0, (item,))]))
            return []
        self.state, admitted = admit_batch(self.state, Stamps.of((item.stamp,)))
        policy = admitted.governing()[0]
        if policy is None or not self.roles(policy, item) & self.apr:
            return []
        out: list[Sp | Tuple] = []
        if self.pff and self.sent is not policy:
            out.extend(policy.sps)
            self.sent = policy
        out.append(item)
        return out
