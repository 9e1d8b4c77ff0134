"""The benchmarks stay runnable: the cheapest experiment as ``make bench`` would run it, and
every experiment ``make bench`` runs at its smallest size.

No timings are asserted; only that a well-formed table is printed and the JSON is written, and
that every experiment's cases run to a result.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench import report
from bench.__main__ import EXPERIMENTS
from bench.harness import Mode

ROOT = Path(__file__).resolve().parents[2]


def test_the_delivery_experiment_prints_a_table_and_writes_json():
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--only", "delivery"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    rows = [line for line in lines if line.startswith("| delivery filter ")]
    assert len(rows) >= 10
    assert all(line.count("|") == lines[0].count("|") for line in rows[:10])
    assert any(re.search(r"\| (yes|NO) +\|$", line) for line in rows)
    path = Path(re.search(r"^results: (\S+);", done.stdout, re.M).group(1).rstrip(";"))
    saved = json.loads(path.read_text())
    assert saved["quick"] is True and saved["machine"]["nproc"]
    assert saved["experiments"]["delivery"]["rows"][0]["unit"] == "ns per tuple per subscriber"
    path.unlink()


def test_a_scale_multiplies_the_tuples_of_a_batch_not_the_pairs():
    assert Mode(quick=True, scale=3).tuples(200_000, 1_000_000, least=1_000) == 600_000
    assert Mode(scale=3).tuples(200_000, 1_000_000, least=1_000) == 3_000_000
    assert Mode(scale=3).pick(7, 9, least=1) == 9


def test_the_smallest_size_is_the_least_each_experiment_names():
    smallest = Mode(quick=True, smallest=True)
    assert smallest.tuples(200_000, 1_000_000, least=1_000) == 1_000
    assert smallest.pick(7, 9, least=1) == 1


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_every_experiment_of_make_bench_runs_at_its_smallest_size(spark, name):
    """In the suite's session: a benchmark that stops running fails here, not at the next
    ``make bench``. Its numbers at this size mean nothing; only that every case ran."""
    result = importlib.import_module(EXPERIMENTS[name]).run(Mode(quick=True, smallest=True))
    assert result.rows and result.goals
    assert all(row.experiment == result.rows[0].experiment for row in result.rows)
    assert report.table(result.rows, result.goals)


def test_a_scale_out_of_bounds_is_refused_by_name():
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--scale", "1000", "--only", "delivery"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--scale: '1000' is not a whole number from 1 to 100" in done.stderr
