"""Figure 10 one item at a time: the shield's state machine as it was before the writer's
path (``boxes.punctuations.shield.admit_batch``) decided whole batches as arrays. Kept here, in
tests only, as the reference that path must match verdict for verdict
(``test_sp_property.py``), and to name each verdict (``test_sp_shield.py``).

* A newer timestamp starts a policy (emptying the current one); the open batch's timestamp adds
  to it (a repeat is ignored, a different sp with one ``sn`` makes it incomplete); anything
  else is late and discarded.
* A tuple seals the open batch; it is granted iff the policy is complete and its stamp names
  it; otherwise the current policy is emptied. Its stamp moves the horizon either way.
"""

from __future__ import annotations

import enum
from dataclasses import replace

from boxes.punctuations.model import Sp, Stamp
from boxes.punctuations.shield import Batch, Policy, ShieldState


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


def add(batch: Batch, sp: Sp) -> tuple[Batch, SpVerdict]:
    same = [s for s in batch.sps if s.sn == sp.sn]
    if same and same[0] == sp:
        return batch, SpVerdict.REPEATED
    if same:
        return replace(batch, conflict=True), SpVerdict.CONFLICT
    return replace(batch, sps=batch.sps + (sp,)), SpVerdict.ADDED


def seal(batch: Batch) -> Policy | None:
    """The complete policy, or None: sns exactly 1..n and no conflict."""
    ordered = tuple(sorted(batch.sps, key=lambda s: s.sn))
    if batch.conflict or [s.sn for s in ordered] != list(range(1, len(ordered) + 1)):
        return None
    return Policy(batch.ts, ordered)


def admit_sp(state: ShieldState, sp: Sp) -> tuple[ShieldState, SpVerdict]:
    if sp.ts > state.horizon:
        return ShieldState(sp.ts, Batch(sp.ts, (sp,))), SpVerdict.STARTED
    if state.batch is not None and sp.ts == state.batch.ts:
        batch, verdict = add(state.batch, sp)
        return replace(state, batch=batch), verdict
    return state, SpVerdict.LATE


def admit_tuple(
    state: ShieldState, stamp: Stamp | None
) -> tuple[ShieldState, Policy | None, TupleVerdict]:
    horizon = max(state.horizon, stamp.ts) if stamp is not None else state.horizon
    current = state.current
    if state.batch is not None:
        current = seal(state.batch)
        if current is None:
            return ShieldState(horizon), None, TupleVerdict.INCOMPLETE
    if current is None:
        return ShieldState(horizon), None, TupleVerdict.NO_POLICY
    if stamp != current.stamp:
        return ShieldState(horizon), None, TupleVerdict.MISMATCH
    if state.batch is None and horizon == state.horizon:
        return state, current, TupleVerdict.GRANTED
    return ShieldState(horizon, None, current), current, TupleVerdict.GRANTED
