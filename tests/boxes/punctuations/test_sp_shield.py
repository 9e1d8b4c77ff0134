"""The shield's state machine, verdict by verdict, including the readings docs/punctuations.md
chose where Figure 10 and the text differ: on Figure 10 item by item (``figure10.py``), which
the writer's batch path matches (``test_sp_property.py``)."""

from __future__ import annotations

import pytest

from boxes.punctuations import EMPTY, Sp, SpsAt, Stamp, Stamps, admit_batch
from boxes.punctuations import patterns as p
from tests.boxes.punctuations.figure10 import SpVerdict, TupleVerdict, admit_sp, admit_tuple


def sp(ts, sn, role="D"):
    return Sp(roles=p.const(role), ts=ts, sn=sn)


def feed(items, state=EMPTY):
    """Verdicts of a sequence of sps and stamps (a stamp stands for a tuple)."""
    verdicts = []
    for item in items:
        if isinstance(item, Sp):
            state, v = admit_sp(state, item)
        else:
            state, _, v = admit_tuple(state, item)
        verdicts.append(v)
    return state, verdicts


S, A, R, C, L = (
    SpVerdict.STARTED,
    SpVerdict.ADDED,
    SpVerdict.REPEATED,
    SpVerdict.CONFLICT,
    SpVerdict.LATE,
)
G, N, INC, M = (
    TupleVerdict.GRANTED,
    TupleVerdict.NO_POLICY,
    TupleVerdict.INCOMPLETE,
    TupleVerdict.MISMATCH,
)


def test_batch_repeat_and_conflict():
    _, v = feed([sp(5, 1), sp(5, 2), sp(5, 2), Stamp(5, 2)])
    assert v == [S, A, R, G]
    _, v = feed([sp(5, 1), sp(5, 2), sp(5, 2, role="GP"), Stamp(5, 2), Stamp(5, 2)])
    assert v == [S, A, C, INC, N]


def test_an_sp_beyond_a_gap_makes_the_policy_incomplete():
    """Choice 3: sps 1, 2, 4 and a tuple counting 2 is not a complete policy of 2."""
    _, v = feed([sp(5, 1), sp(5, 2), sp(5, 4), Stamp(5, 2)])
    assert v == [S, A, A, INC]


def test_a_policy_is_sealed_at_its_first_tuple():
    """Choice 2: an sp of the current timestamp after the segment began is late; the policy
    that governs the next tuples is unchanged."""
    state, v = feed([sp(5, 1), Stamp(5, 1), sp(5, 2, role="GP"), Stamp(5, 1)])
    assert v == [S, G, L, G]
    assert [s.roles for s in state.current.sps] == [p.const("D")]


def test_every_tuple_is_checked_against_the_stamp():
    """Choice 4: an older stamp, a newer one or none empties the current policy."""
    for stray in (Stamp(4, 1), Stamp(6, 1), Stamp(5, 2), None):
        _, v = feed([sp(5, 1), Stamp(5, 1), stray, Stamp(5, 1)])
        assert v == [S, G, M, N], stray


def test_late_policy_discarded_also_after_the_current_one_was_emptied():
    """Choice 1 (Theorem 5.1, case 2): Figure 10's L.CP.ts = 0 would take the late sps."""
    state, v = feed([sp(5, 1), Stamp(5, 1), Stamp(7, 1), sp(7, 1), sp(6, 1), Stamp(7, 1)])
    assert v == [S, G, M, L, L, N]
    assert state.horizon == 7
    _, v = feed([sp(8, 1), Stamp(8, 1)], state)
    assert v == [S, G]


def test_a_tuple_before_any_policy_moves_the_horizon_too():
    _, v = feed([Stamp(3, 1), sp(3, 1), Stamp(3, 1), sp(4, 1), Stamp(4, 1)])
    assert v == [N, L, N, S, G]


def test_incomplete_policy_then_a_newer_one():
    _, v = feed([sp(5, 2), Stamp(5, 2), Stamp(5, 2), sp(6, 1), Stamp(6, 1)])
    assert v == [S, INC, N, S, G]


def test_the_common_case_keeps_the_state():
    state, _ = feed([sp(5, 1), Stamp(5, 1)])
    after, policy, verdict = admit_tuple(state, Stamp(5, 1))
    assert after is state and policy is state.current and verdict is G
    after, admitted = admit_batch(state, Stamps.of([Stamp(5, 1)] * 3))
    assert after is state and admitted.governing() == [state.current] * 3
    assert all(p is state.current for p in admitted.governing())


def test_a_batch_names_rows_in_order_within_it():
    """``admit_batch`` refuses sps placed out of order or past the batch's last row, rather
    than deciding some other interleaving than the writer's."""
    for sps_at in ([(2, [sp(5, 1)])], [(1, [sp(5, 1)]), (0, [sp(6, 1)])], [(-1, [sp(5, 1)])]):
        with pytest.raises(ValueError):
            admit_batch(EMPTY, Stamps.of([Stamp(5, 1)]), SpsAt.of(sps_at))
    after, admitted = admit_batch(
        EMPTY, Stamps.of([Stamp(5, 1)]), SpsAt.of([(0, [sp(5, 1)]), (1, [sp(6, 1)])])
    )
    assert admitted.governing()[0].ts == 5 and after.batch.ts == 6
