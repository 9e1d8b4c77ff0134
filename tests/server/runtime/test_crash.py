"""Crash safety for real: SIGKILL a server runtime, or only its Spark driver, at random
moments, then count the results.

Every acknowledged tuple must come out of the diagram exactly once, and no tuple (even an
unacknowledged one, which may or may not have reached the log) may come out twice.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest
from crash_child import DIAGRAM, STREAMS
from runtime_helpers import WAIT, plan_of, read_results, shared_results, wait_until

KILLS = 5
DRIVER_KILLS = 2
CHILD = Path(__file__).with_name("crash_child.py")
# Spark runs in the child processes these tests kill and start again, which no fixture tells.
pytestmark = [pytest.mark.spark, pytest.mark.slow]


class Child:
    """One life of the runtime process, fed batches by a thread until it is killed."""

    def __init__(self, data_dir: Path, next_id, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(CHILD), str(data_dir), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )
        self.next_id = next_id
        self.acked: list[int] = []
        self.ready = threading.Event()
        self.stopped = threading.Event()
        self.feeder = threading.Thread(target=self._feed, daemon=True)
        self.feeder.start()

    def _feed(self) -> None:
        if self.process.stdout.readline().strip() != "ready":
            return
        self.ready.set()
        try:
            while not self.stopped.is_set():
                ids = self.next_id(random.randint(1, 20))
                stream = random.choice(STREAMS)
                tuples = [{"symbol": f"t{i}", "price": float(i)} for i in ids]
                self.process.stdin.write(json.dumps({"stream": stream, "tuples": tuples}) + "\n")
                self.process.stdin.flush()
                if not self.process.stdout.readline().startswith("ack"):
                    return  # killed before it acknowledged: these ids stay unacknowledged
                self.acked.extend(ids)
        except (BrokenPipeError, OSError):
            return

    def kill(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.stopped.set()
        self.feeder.join()

    def finish(self) -> None:
        self.stopped.set()
        self.feeder.join()
        self.process.stdin.close()
        self.process.wait(timeout=WAIT)


def delivered_ids(data_dir: Path) -> Counter:
    """What the diagram's result log holds: its shared execution's (``sharing.py``), which
    it joined first, at position 0."""
    results = shared_results(data_dir / "diagrams", plan_of(DIAGRAM), "crashy_out")
    if not results.exists():
        return Counter()
    return Counter(
        int(row["symbol"][1:]) for _, table in read_results(results) for row in table.to_pylist()
    )


def id_source():
    """Fresh tuple ids for every feeder thread, never one twice."""
    counter = iter(range(10**9))
    lock = threading.Lock()

    def next_ids(n: int) -> list[int]:
        with lock:
            return [next(counter) for _ in range(n)]

    return next_ids


def java_children(parent: int) -> list[int]:
    """The Java processes descended from ``parent`` (a runtime's Spark driver)."""
    by_parent: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError):
            continue  # ended while we looked
        by_parent.setdefault(ppid, []).append(int(stat.parent.name))
    found, todo = [], [parent]
    while todo:
        for pid in by_parent.get(todo.pop(), []):
            todo.append(pid)
            try:
                if (Path("/proc") / str(pid) / "comm").read_text().strip() == "java":
                    found.append(pid)
            except OSError:
                continue
    return found


def test_every_acknowledged_tuple_comes_out_exactly_once_across_sigkills(tmp_path):
    next_ids = id_source()
    acked: list[int] = []
    for _ in range(KILLS):
        child = Child(tmp_path, next_ids)
        assert child.ready.wait(WAIT), "the runtime did not start"
        before = sum(delivered_ids(tmp_path).values())
        wait_until(
            lambda: sum(delivered_ids(tmp_path).values()) > before,
            what="the restarted query to deliver",
        )
        target = len(child.acked) + random.randint(1, 40)
        wait_until(lambda: len(child.acked) >= target, what="more acknowledgements")
        child.kill()  # while the query is busy with the appends that keep coming
        acked.extend(child.acked)
    final = Child(tmp_path, next_ids)
    assert final.ready.wait(WAIT), "the runtime did not restart"
    wait_until(lambda: len(final.acked) >= 20, what="acknowledgements after the last restart")
    final.stopped.set()
    final.feeder.join()
    acked.extend(final.acked)
    delivered = wait_until(
        lambda: (d := delivered_ids(tmp_path)).keys() >= set(acked) and d,
        what="every acknowledged tuple to come out",
    )
    final.finish()
    delivered = delivered_ids(tmp_path)
    assert set(acked) <= delivered.keys()
    assert [i for i, n in delivered.items() if n > 1] == []


def test_a_killed_spark_driver_is_replaced_and_every_acknowledged_tuple_comes_out_once(tmp_path):
    """The JVM is killed while tuples keep arriving (the log is the runtime's, so they are
    still acknowledged); a new driver resumes the diagram from its checkpoint."""
    child = Child(tmp_path, id_source())
    assert child.ready.wait(WAIT), "the runtime did not start"
    for _ in range(DRIVER_KILLS):
        before = sum(delivered_ids(tmp_path).values())
        wait_until(
            lambda: sum(delivered_ids(tmp_path).values()) > before, what="the diagram to deliver"
        )
        (driver,) = java_children(child.process.pid)
        target = len(child.acked) + random.randint(1, 40)
        wait_until(lambda: len(child.acked) >= target, what="more acknowledgements")
        os.kill(driver, signal.SIGKILL)
        wait_until(
            lambda: (pids := java_children(child.process.pid)) and pids != [driver],
            what="a new Spark driver",
        )
    target = len(child.acked) + 20
    wait_until(lambda: len(child.acked) >= target, what="acknowledgements after the last kill")
    child.stopped.set()
    child.feeder.join()
    wait_until(
        lambda: delivered_ids(tmp_path).keys() >= set(child.acked),
        what="every acknowledged tuple to come out",
    )
    delivered = delivered_ids(tmp_path)
    assert child.process.poll() is None, "the runtime process itself must survive"
    child.finish()
    assert [i for i, n in delivered.items() if n > 1] == []
