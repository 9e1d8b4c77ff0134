"""The benchmarks stay runnable: the cheapest experiment, as ``make bench`` would run it.

No timings are asserted; only that a well-formed table is printed and the JSON is written.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

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
    assert Mode(quick=True, scale=3).tuples(200_000, 1_000_000) == 600_000
    assert Mode(scale=3).tuples(200_000, 1_000_000) == 3_000_000
    assert Mode(scale=3).pick(7, 9) == 9


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
