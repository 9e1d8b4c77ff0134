"""Policy assembly and the Security Shield of seed 003 (Figure 10, Theorem 5.1), pure.

One shield per stream sees that stream's sps and tuples in the order they were logged. Its
state is the current policy and the *horizon*: the newest policy timestamp seen so far, from an
sp or from a tuple's stamp. ``admit_sp`` and ``admit_tuple`` return the next state and a
verdict; no I/O, so a replay of the log decides exactly as the first pass did.

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

``SecurityShield`` is Figure 10 whole (roles APR, flag PFF, the policy sent once before the
first tuple it lets through), for the paper's examples; the server decides labels instead
(``decision.py``) and tests the roles at delivery.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from boxes.punctuations.model import Sp, Stamp, from_json


class SpVerdict(enum.Enum):
    STARTED = "started a new policy"
    ADDED = "added to the open policy"
    REPEATED = "the same sp again: ignored"
    CONFLICT = "a different sp with the same number: the policy is incomplete"
    LATE = "late: discarded"


class TupleVerdict(enum.Enum):
    GRANTED = "governed by the current, complete policy"
    NO_POLICY = "no policy: denied"
    INCOMPLETE = "the policy is incomplete: emptied, denied"
    MISMATCH = "the stamp names another policy: current policy emptied, denied"


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
    """An open sp batch: sps of one timestamp, no tuple after them yet."""

    ts: int
    sps: tuple[Sp, ...]
    conflict: bool = False

    def add(self, sp: Sp) -> tuple[Batch, SpVerdict]:
        same = [s for s in self.sps if s.sn == sp.sn]
        if same and same[0] == sp:
            return self, SpVerdict.REPEATED
        if same:
            return replace(self, conflict=True), SpVerdict.CONFLICT
        return replace(self, sps=self.sps + (sp,)), SpVerdict.ADDED

    def seal(self) -> Policy | None:
        """The complete policy, or None: sns exactly 1..n and no conflict."""
        ordered = tuple(sorted(self.sps, key=lambda s: s.sn))
        if self.conflict or [s.sn for s in ordered] != list(range(1, len(ordered) + 1)):
            return None
        return Policy(self.ts, ordered)


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


def admit_sp(state: ShieldState, sp: Sp) -> tuple[ShieldState, SpVerdict]:
    """The state after ``sp``: a newer timestamp starts a policy (emptying the current one),
    the open batch's timestamp adds to it, anything else is late."""
    if sp.ts > state.horizon:
        return ShieldState(sp.ts, Batch(sp.ts, (sp,))), SpVerdict.STARTED
    if state.batch is not None and sp.ts == state.batch.ts:
        batch, verdict = state.batch.add(sp)
        return replace(state, batch=batch), verdict
    return state, SpVerdict.LATE


def admit_tuple(
    state: ShieldState, stamp: Stamp | None
) -> tuple[ShieldState, Policy | None, TupleVerdict]:
    """The policy governing a tuple with ``stamp`` (None: denied) and the next state."""
    horizon = max(state.horizon, stamp.ts) if stamp is not None else state.horizon
    current = state.current
    if state.batch is not None:
        current = state.batch.seal()
        if current is None:
            return ShieldState(horizon), None, TupleVerdict.INCOMPLETE
    if current is None:
        return ShieldState(horizon), None, TupleVerdict.NO_POLICY
    if stamp != current.stamp:
        return ShieldState(horizon), None, TupleVerdict.MISMATCH
    if state.batch is None and horizon == state.horizon:
        return state, current, TupleVerdict.GRANTED  # the common case allocates nothing
    return ShieldState(horizon, None, current), current, TupleVerdict.GRANTED


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
            self.state, _ = admit_sp(self.state, item)
            return []
        self.state, policy, _ = admit_tuple(self.state, item.stamp)
        if policy is None or not self.roles(policy, item) & self.apr:
            return []
        out: list[Sp | Tuple] = []
        if self.pff and self.sent is not policy:
            out.extend(policy.sps)
            self.sent = policy
        out.append(item)
        return out


@dataclass(frozen=True)
class Run:
    """Tuples ``start:stop`` of a frame, one stamp, governed by ``policy`` (None: denied)."""

    start: int
    stop: int
    policy: Policy | None


def admit_frame(
    state: ShieldState, stamps: Sequence[Stamp | None]
) -> tuple[ShieldState, list[Run]]:
    """``admit_tuple`` for a frame of tuples (no sp among them), one call per run of equal
    stamps: after a run's first tuple, the others with its stamp change nothing (the policy
    it was granted stays current; a denied one leaves no policy, and the horizon already
    holds the stamp)."""
    runs: list[Run] = []
    start = 0
    for stop in range(1, len(stamps) + 1):
        if stop == len(stamps) or stamps[stop] != stamps[start]:
            state, policy, _ = admit_tuple(state, stamps[start])
            runs.append(Run(start, stop, policy))
            start = stop
    return state, runs


def admit_batch(
    state: ShieldState,
    stamps: Sequence[Stamp | None],
    sps_at: Sequence[tuple[int, Sequence[Sp]]] = (),
) -> tuple[ShieldState, list[Run]]:
    """``admit_frame`` for a frame whose batch had sps among its tuples: ``sps_at`` pairs each
    run of sps, in order, with the row it came before (the frame's length: after the last),
    and each is admitted there, so the frame decides as its items did one by one."""
    runs: list[Run] = []
    start = 0
    for at, sps in [*sps_at, (len(stamps), ())]:
        if at > start:
            state, chunk = admit_frame(state, stamps[start:at])
            runs += [Run(r.start + start, r.stop + start, r.policy) for r in chunk]
            start = at
        for sp in sps:
            state, _ = admit_sp(state, sp)
    return state, runs
