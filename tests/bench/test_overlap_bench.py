"""``python -m bench.overlap`` stays runnable: one repetition each way, in the suite's session.
No timing is asserted; the queries counted are: one for the shared prefix, one per diagram
alone."""

from __future__ import annotations

import random
from datetime import timedelta

from bench.overlap import T0, run


def test_one_query_runs_the_shared_prefix_and_each_diagram_alone_has_its_own(spark):
    rng = random.Random(7)
    rows = [
        (
            rng.choice(("in1", "in2")),
            {
                "time": (T0 + timedelta(seconds=n)).isoformat(),
                "symbol": rng.choice(("IBM", "XOM")),
                "price": rng.uniform(0, 100),
            },
        )
        for n in range(300)
    ]
    found: dict = {}
    for share in (True, False):
        assert run(spark, 3, rows, share, found) > 0
    assert found["queries", True] == 1
    assert found["queries", False] == 3
