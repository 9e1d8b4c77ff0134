"""``python -m bench.stateful_prefix`` stays runnable: one repetition each way, in the suite's
session. No timing is asserted; what is checked is that every window result arrives both ways
(``run`` waits for them all) and the queries counted: the prefix's and one per remainder when
derived, one per diagram alone."""

from __future__ import annotations

import random
from datetime import timedelta

from bench.stateful_prefix import T0, run


def test_derived_windows_and_windows_alone_each_give_every_result(spark):
    rng = random.Random(7)
    rows = [
        {
            "time": (T0 + timedelta(milliseconds=40 * n)).isoformat(),
            "symbol": rng.choice(("IBM", "XOM")),
            "price": rng.uniform(0, 100),
            "ms": 40 * n,
        }
        for n in range(300)
    ]
    found: dict = {}
    for derived in (True, False):
        assert run(spark, 1, rows, derived, found) > 0
    assert found["queries", True] == 2
    assert found["queries", False] == 1
