"""The crash oracle on a real-time output (issue 41): SIGKILL the runtime while a real-time
query delivers, start it again; every acknowledged tuple is in the result log, none twice.

The receiver skips rows its log holds at the same (epoch, partition, row) place
(``server/runtime/realtime.py``). This oracle found rows replayed under a later epoch, logged
twice: it fails until that is fixed, and real-time mode stays off by default.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest
from crash_child import REAL_TIME
from runtime_helpers import WAIT, plan_of, read_results, wait_until
from test_crash import Child, id_source

from server.runtime.checkpoints import DiagramDir
from server.runtime.versions import fingerprint

KILLS = 2
pytestmark = [pytest.mark.spark, pytest.mark.slow]


def delivered_ids(data_dir: Path) -> Counter:
    """What the real-time diagram's own result log holds (it runs alone: no shared host)."""
    plan = plan_of(REAL_TIME)
    results = DiagramDir(data_dir / "diagrams", "crashy", fingerprint(plan)).results("crashy_out")
    if not results.exists():
        return Counter()
    return Counter(
        int(row["symbol"][1:]) for _, table in read_results(results) for row in table.to_pylist()
    )


@pytest.mark.xfail(
    strict=False,  # it passed once in five runs: a replay does not always cross an epoch
    reason="each epoch's end offset is logged as its start plus one row, so the next epoch "
    "replays delivered rows under a new epoch number, which places do not match: "
    "docs/architecture.md, 'Exactly once: designed, NOT achieved'",
)
def test_a_real_time_output_keeps_every_acknowledged_tuple_once_across_sigkills(tmp_path):
    next_ids = id_source()
    acked: list[int] = []
    for _ in range(KILLS):
        child = Child(tmp_path, next_ids, "realtime")
        assert child.ready.wait(WAIT), "the runtime did not start"
        before = sum(delivered_ids(tmp_path).values())
        wait_until(
            lambda: sum(delivered_ids(tmp_path).values()) > before,
            what="the restarted real-time query to deliver",
        )
        target = len(child.acked) + random.randint(20, 60)
        wait_until(lambda: len(child.acked) >= target, what="more acknowledgements")
        child.kill()  # mid-epoch: the real-time query logs each group as it comes
        acked.extend(child.acked)
    final = Child(tmp_path, next_ids, "realtime")
    assert final.ready.wait(WAIT), "the runtime did not restart"
    wait_until(lambda: len(final.acked) >= 20, what="acknowledgements after the last restart")
    final.stopped.set()
    final.feeder.join()
    acked.extend(final.acked)
    wait_until(
        lambda: delivered_ids(tmp_path).keys() >= set(acked),
        what="every acknowledged tuple to come out",
    )
    final.finish()
    delivered = delivered_ids(tmp_path)
    assert set(acked) <= delivered.keys()
    assert [i for i, n in delivered.items() if n > 1] == []
