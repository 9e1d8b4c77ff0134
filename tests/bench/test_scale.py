"""``make bench-scale``'s parts that need no Spark: its workload, the /proc tree it measures and
the verdicts it prints. The bench itself starts a server with Spark and is run by hand."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import pytest

from bench.proctree import (
    anon_pss_bytes,
    command,
    pss_bytes,
    started,
    tree,
    tree_cpu_seconds,
    tree_pss_bytes,
    tree_rss_bytes,
)
from bench.scale import (
    SCHEMA,
    Point,
    at,
    counts,
    identical,
    kind,
    main,
    report,
    slope,
    stream_names,
    workload,
)
from boxes.document import validate
from boxes.types import parse_schema


def test_the_workload_is_seeded_and_a_smaller_count_is_a_prefix():
    assert workload(30)[:10] == workload(10)
    assert workload(10, seed=1) != workload(10)


def test_each_diagram_reads_one_to_four_of_the_fifty_streams_and_is_valid():
    fields = {k: v for k, v in SCHEMA.items() if k != "name"}  # the API's body names it
    streams = {n: parse_schema(fields, n)[0] for n in stream_names()}
    docs = workload(60)
    kinds = set()
    for doc in docs:
        inputs = list(doc["inputs"])
        assert 1 <= len(inputs) <= 4 and len(set(inputs)) == len(inputs)
        assert set(inputs) <= set(streams)
        kinds.add(doc["boxes"]["kept"]["type"])
        plan = validate(doc, {i: streams[i] for i in inputs})
        assert list(plan.outputs) == [f"{doc['name']}_out"]
    assert kinds == {"filter", "aggregate"}
    assert {len(d["inputs"]) for d in docs} == {1, 2, 3, 4}


def test_identical_diagrams_differ_only_in_their_names():
    a, b = identical(2)
    assert a["name"] != b["name"]
    assert a["inputs"] == b["inputs"] and a["boxes"] == b["boxes"]


def test_the_process_tree_holds_a_child_and_sums_its_memory_and_cpu():
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        me = os.getpid()
        found = tree(me)
        assert found[0] == me and child.pid in found
        assert "sys.stdin.read()" in command(child.pid)
        assert kind(command(child.pid)) == "server (gunicorn)"
        assert started(me) <= started(child.pid)
        assert tree_rss_bytes(me) > tree_rss_bytes(child.pid) > 0
        assert tree_rss_bytes(me) >= tree_pss_bytes(me) > 0
        assert pss_bytes(me) > anon_pss_bytes(me) > 0
        assert tree_cpu_seconds(me) > 0
    finally:
        child.communicate(b"")
    assert child.pid not in tree(os.getpid())


def test_the_parts_of_a_spark_server_are_told_apart():
    assert kind("/usr/lib/jvm/java-17/bin/java -cp x org.apache.spark.deploy.SparkSubmit") == "JVM"
    assert kind("python -m pyspark.daemon pyspark.sql.worker.create_data_source") == (
        "Spark's Python workers"
    )


def test_a_fit_through_the_counts_is_read_at_a_thousand():
    points = {0: 500.0, 10: 1500.0, 30: 3500.0}
    assert slope(points) == pytest.approx(100.0)
    assert at(points, 1000) == pytest.approx(100_500.0)
    assert slope({10: 1.0}) == 0.0


def test_counts_are_positive_whole_numbers():
    assert counts("10,30") == [10, 30]
    for bad in ("", "ten", "0,10", "-1"):
        with pytest.raises(argparse.ArgumentTypeError):
            counts(bad)


def test_the_verdicts_say_what_was_extrapolated():
    mib = 2**20
    base = Point(0, resume_s=10.0, pss=500 * mib, idle_cores=0.01)
    ten = Point(10, deploys=[5.0] + [2.0] * 9, pss=1500 * mib, idle_cores=0.1, resume_s=40.0)
    rows, goals = report([base, ten], Point(10), [2000 * mib, 2100 * mib, 3000 * mib])
    verdicts = {g.goal: (g.measured, g.met) for g in goals}
    assert verdicts["deploy p50 < 1 s warm"] == ("2.00 s", False)
    measured, met = verdicts["1000 diagrams < 12 GB"]
    assert "EXTRAPOLATED" in measured and "100.0 MiB/diagram" in measured and not met
    assert verdicts["100 identical diagrams <= 2x one"][0].startswith("10.0x at 10; 100x")
    assert any(r.case == "EXTRAPOLATED at 1000: memory, PSS" for r in rows)


def test_a_hundred_identical_diagrams_are_measured_not_extrapolated():
    mib = 2**20
    base = Point(0, resume_s=10.0, pss=500 * mib, idle_cores=0.01)
    ten = Point(10, deploys=[0.3] * 10, pss=1500 * mib, idle_cores=0.1, resume_s=40.0)
    shared = Point(100, shared=100)
    app = [100 * mib, 101 * mib, 101 * mib + 99 * 30 * 1024]
    rows, goals = report([base, ten], shared, [2000 * mib, 2100 * mib, 2150 * mib], app)
    verdicts = {g.goal: (g.measured, g.met) for g in goals}
    # one new plan at the slope (100 MiB) and 99 members of 30 KiB, not the tree's 1.5x
    measured, met = verdicts["100 identical diagrams <= 2x one"]
    assert measured.startswith("1.03x at 100: one plan at the slope (100.00 MiB)") and met
    assert "1.5x as the tree's PSS moved" in measured
    each = [r for r in rows if r.case == "  each of the other 99: app's process, anonymous PSS"]
    assert [(r.unit, r.secured) for r in each] == [("KiB", 30)]
    assert not any("EXTRAPOLATED to 100" in r.case for r in rows)
    assert ("100 identical diagrams: most sharing one execution", 100) in [
        (r.case, r.secured) for r in rows
    ]


def test_one_diagram_is_a_plan_of_its_own_when_plans_are_counted():
    """Members of shared plans cost kilobytes: the memory slope is taken over the plans the
    diagrams run as, not over the diagrams, once plans were counted."""
    mib = 2**20
    base = Point(0, resume_s=10.0, pss=500 * mib, idle_cores=0.01)
    ten = Point(10, deploys=[0.3] * 10, pss=1500 * mib, idle_cores=0.1, resume_s=40.0, plans=5)
    shared = Point(100, shared=100, plans=1)
    app = [100 * mib, 101 * mib, 101 * mib + 99 * 1024 * 1024]
    rows, goals = report([base, ten], shared, [2000 * mib, 2200 * mib, 2300 * mib], app)
    found = {r.case: r.secured for r in rows}
    assert found["memory per diagram (slope of PSS)"] == 100
    assert found["memory per plan of its own (slope of PSS over plans)"] == 200
    assert found["100 identical diagrams: plans they started"] == 1
    verdicts = {g.goal: (g.measured, g.met) for g in goals}
    measured, met = verdicts["100 identical diagrams <= 2x one"]
    assert measured.startswith("1.50x at 100: one plan at the slope (200.00 MiB)") and met


def test_a_run_that_reached_a_thousand_reports_what_it_measured_there():
    mib = 2**20
    base = Point(0, resume_s=10.0, pss=500 * mib, idle_cores=0.01)
    top = Point(1000, deploys=[0.3] * 5, pss=6000 * mib, idle_cores=0.1, resume_s=80.0)
    rows, goals = report([base, top], Point(10), [2000 * mib, 2010 * mib, 2100 * mib])
    verdicts = {g.goal: (g.measured, g.met) for g in goals}
    assert verdicts["1000 diagrams < 12 GB"] == (
        "5.9 GiB MEASURED (slope through 0, 1000 diagrams: 5.5 MiB/diagram)",
        True,
    )
    assert verdicts["1000 resumed < 300 s after a restart"] == ("80 s MEASURED (1000: 80 s)", True)
    assert verdicts["idle CPU < 0.5 core"] == ("0.10 at 1000; 0.10 MEASURED at 1000", True)
    assert any(r.case == "MEASURED at 1000: memory, PSS" for r in rows)


def test_a_saved_run_is_reported_again_from_its_json(tmp_path, capsys):
    mib = 2**20
    points = [Point(0, pss=500 * mib), Point(10, deploys=[2.0, 2.0], pss=1500 * mib)]
    saved = {
        "points": [vars(p) for p in points],
        "identical": {"point": vars(Point(10)), "pss": [2000 * mib, 2100 * mib, 3000 * mib]},
    }
    path = tmp_path / "scale.json"
    path.write_text(json.dumps({"experiments": {"scale": {"extra": saved}}}))
    assert main(["--report", str(path)]) == 0
    out = capsys.readouterr().out
    assert "| scale      | 100 identical diagrams <= 2x one " in out
    assert "10.0x at 10; 100x EXTRAPOLATED to 100 (linearly)" in out
