"""The login throttle's delays, on a clock the test moves, with its counts in memory and in a
real Redis (``limit_store``): the rule is the same whichever holds them."""

from __future__ import annotations

import pytest

from boxes.errors import RateLimited
from server.limits.throttle import Throttle


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _wait(throttle: Throttle, user: str = "joe", address: str = "a") -> int:
    try:
        throttle.check(user, address)
    except RateLimited as refused:
        return refused.retry_after
    return 0


def test_the_delay_doubles_with_each_failure_past_the_limit(limit_store):
    clock = Clock()
    throttle = Throttle(lambda: 3, limit_store, clock)
    for _ in range(2):
        throttle.failed("joe", "a")
        assert _wait(throttle) == 0
    waits = []
    for _ in range(6):
        throttle.failed("joe", "a")
        waits.append(_wait(throttle))
        clock.now += waits[-1]
        assert _wait(throttle) == 0
    assert waits == [1, 2, 4, 8, 16, 32]


def test_the_delay_is_capped_and_forgotten_after_a_quiet_spell(limit_store):
    clock = Clock()
    throttle = Throttle(lambda: 1, limit_store, clock)
    for _ in range(20):
        throttle.failed("joe", "a")
        clock.now += _wait(throttle)
    throttle.failed("joe", "a")
    assert _wait(throttle) == Throttle.MAX_DELAY
    clock.now += Throttle.MAX_DELAY + Throttle.QUIET - 1
    throttle.failed("eve", "b")  # any failure sweeps the keys quiet for long enough
    throttle.failed("joe", "a")
    assert _wait(throttle) == Throttle.MAX_DELAY  # not quiet long enough: still capped
    clock.now += Throttle.MAX_DELAY + Throttle.QUIET
    throttle.failed("eve", "b")
    throttle.failed("joe", "a")
    assert _wait(throttle) == 1


def test_other_addresses_and_a_success_are_not_held_back(limit_store):
    clock = Clock()
    throttle = Throttle(lambda: 2, limit_store, clock)
    for _ in range(5):
        throttle.failed("joe", "attacker")
    assert _wait(throttle, "joe", "attacker") > 0
    assert _wait(throttle, "joe", "desk") == 0
    throttle.failed("joe", "desk")
    throttle.succeeded("joe", "desk")
    throttle.failed("joe", "desk")
    assert _wait(throttle, "joe", "desk") == 0


@pytest.mark.parametrize("limit", [1, 10])
def test_the_address_counts_across_users_with_a_larger_allowance(limit, limit_store):
    throttle = Throttle(lambda: limit, limit_store, Clock())
    allowance = limit * Throttle.ADDRESS_FACTOR
    for n in range(allowance - 1):
        throttle.failed(f"u{n}", "a")
    assert _wait(throttle, "someone-else", "a") == 0
    throttle.failed("one-more", "a")
    assert _wait(throttle, "someone-else", "a") == 1
