"""A diagram over 200 input streams: one source process, correct labels, bounded memory."""

from __future__ import annotations

import os
from pathlib import Path

from runtime_helpers import TRADE, Collector, plan_of, union_doc

from server.runtime import checkpoints

STREAMS = 200
MEMORY_LIMIT = 4 << 30


def tree_rss(pid: int) -> int:
    """Resident memory of a process and all its descendants (the JVM, Python workers)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        proc = int(entry.name)
        children.setdefault(int(fields["PPid"]), []).append(proc)
        rss[proc] = int(fields.get("VmRSS", "0 kB").split()[0]) * 1024
    total, stack = 0, [pid]
    while stack:
        proc = stack.pop()
        total += rss.get(proc, 0)
        stack.extend(children.get(proc, []))
    return total


def test_a_union_of_200_streams_labels_each_tuple_with_its_own_stream(runtime):
    names = [f"s{i:03d}" for i in range(STREAMS)]
    for name in names:
        runtime.create_stream(name, TRADE)
    plan = plan_of(union_doc("wide", names))
    results = Collector()
    runtime.deploy("wide", plan, results)
    for name in names:
        runtime.append(name, [{"symbol": name, "price": 1.0}])
    rows = results.wait_for_rows(STREAMS)
    for row in rows:
        bit = plan.inputs.index(row["symbol"])
        assert row["_label"] == [bit]  # a sparse label: one int, whatever the width
    assert sorted(r["symbol"] for r in rows) == names
    assert tree_rss(os.getpid()) < MEMORY_LIMIT


def test_a_union_checkpointed_as_branches_keeps_them_and_a_new_one_is_one_scan(
    make_runtime, spark, monkeypatch
):
    """Spark refuses a checkpoint logged with another number of sources (a union's branches
    are a source each): a diagram whose checkpoint was logged before unions were one scan
    resumes in branches, each tuple once with its own stream's label; a new one is one scan."""
    runtime = make_runtime(share_plans=False)  # its query's name
    names = ["c1", "c2", "c3"]
    for name in names:
        runtime.create_stream(name, TRADE)
    plan = plan_of(union_doc("resumed", names, where="price > 0"))
    rows = Collector()
    with monkeypatch.context() as before:  # as the runtime ran before: branches, no marker
        before.setattr(checkpoints, "settle_one_scan", lambda checkpoint: False)
        runtime.deploy("resumed", plan, rows)
        for name in names:
            runtime.append(name, [{"symbol": f"{name}-before", "price": 1.0}])
        rows.wait_for_rows(3)
        runtime.stop("resumed")
    for name in names:
        runtime.append(name, [{"symbol": f"{name}-stopped", "price": 1.0}])
    runtime.deploy("resumed", plan, rows)
    for name in names:
        runtime.append(name, [{"symbol": f"{name}-after", "price": 1.0}])
    got = rows.wait_for_rows(9)
    assert unions(spark, "resumed.resumed_out") > 0
    expected = [f"{n}-{when}" for n in names for when in ("before", "stopped", "after")]
    assert sorted(r["symbol"] for r in got) == sorted(expected)
    for row in got:
        assert row["_label"] == 1 << plan.inputs.index(row["symbol"].split("-")[0])
    runtime.stop("resumed")
    fresh = Collector()
    runtime.deploy("fresh", plan_of(union_doc("fresh", names, where="price > 0")), fresh)
    runtime.append("c2", [{"symbol": "c2-fresh", "price": 1.0}])
    assert [r["symbol"] for r in fresh.wait_for_rows(1)] == ["c2-fresh"]
    assert unions(spark, "fresh.fresh_out") == 0
    runtime.stop("fresh")


def unions(spark, query_name: str) -> int:
    """The unions in the plan of a running query's last batch."""
    query = next(q for q in spark.streams.active if q.name == query_name)
    query.processAllAvailable()
    execution = query._jsq.streamingQuery().lastExecution()
    return execution.analyzed().toString().count("Union")
