"""The crash oracle on a real-time output (issue 41): SIGKILL the runtime while a real-time
query delivers, start it again; every acknowledged tuple is in the result log, none twice.

A batch the kill cut short runs again from its start for a batch duration of its own, so it
may end before the lost run got, and the next epochs bring the rows past its end again under
new numbers: the receiver must know a row by its input's position, not by its epoch
(``server/runtime/realtime.py``). The appends come as fast as they are acknowledged, so the
restarted query starts far behind, where that happens.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest
from crash_child import REAL_TIME
from runtime_helpers import WAIT, plan_of, read_results, wait_until
from test_crash import Child, id_source

from server.runtime.checkpoints import DiagramDir, last_commit
from server.runtime.versions import fingerprint

KILLS = 2
pytestmark = [pytest.mark.spark, pytest.mark.slow]


def output_dir(data_dir: Path) -> DiagramDir:
    """The real-time diagram's directory (it runs alone: no shared host)."""
    return DiagramDir(data_dir / "diagrams", "crashy", fingerprint(plan_of(REAL_TIME)))


def delivered_ids(data_dir: Path) -> Counter:
    """What the real-time diagram's own result log holds."""
    results = Path(output_dir(data_dir).results("crashy_out"))
    if not results.exists():
        return Counter()
    return Counter(
        int(row["symbol"][1:]) for _, table in read_results(results) for row in table.to_pylist()
    )


def logged_bytes(data_dir: Path) -> int:
    """How much the result log holds: it grows with every group logged (cheap to poll)."""
    results = Path(output_dir(data_dir).results("crashy_out"))
    return sum(f.stat().st_size for f in results.iterdir()) if results.exists() else 0


def committed(data_dir: Path) -> int:
    """The real-time query's last committed epoch (-1 before the first)."""
    found = last_commit(output_dir(data_dir).checkpoint("crashy_out"))
    return -1 if found is None else found


def test_a_real_time_output_keeps_every_acknowledged_tuple_once_across_sigkills(tmp_path):
    next_ids = id_source()
    acked: list[int] = []
    for _ in range(KILLS):
        child = Child(tmp_path, next_ids, "realtime")
        assert child.ready.wait(WAIT), "the runtime did not start"
        before = logged_bytes(tmp_path)
        wait_until(lambda: logged_bytes(tmp_path) > before, what="the real-time query to deliver")
        target = len(child.acked) + random.randint(20, 60)
        wait_until(lambda: len(child.acked) >= target, what="more acknowledgements")
        child.kill()  # mid-epoch: the real-time query logs each group as it comes
        acked.extend(child.acked)
    final = Child(tmp_path, next_ids, "realtime")
    assert final.ready.wait(WAIT), "the runtime did not restart"
    restarted = committed(tmp_path)
    wait_until(lambda: len(final.acked) >= 20, what="acknowledgements after the last restart")
    final.stopped.set()
    final.feeder.join()
    acked.extend(final.acked)
    # the replay, and an epoch from where it ended: where rows past a short replay come again
    wait_until(lambda: committed(tmp_path) >= restarted + 2, what="two epochs after the restart")
    wait_until(
        lambda: delivered_ids(tmp_path).keys() >= set(acked),
        what="every acknowledged tuple to come out",
    )
    final.finish()
    delivered = delivered_ids(tmp_path)
    assert set(acked) <= delivered.keys()
    assert [i for i, n in delivered.items() if n > 1] == []
