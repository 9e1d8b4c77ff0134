"""``sluice run`` as a user runs it: the installed console script, real files, a real Spark.

Only the successful runs start Spark (marked ``spark``); every invalid diagram, argument or
file is answered (exit 2, problems on stderr) before Spark starts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paper import as_yaml, q1

SLUICE = str(Path(sys.executable).with_name("sluice"))
FIGURE_6 = as_yaml(q1(headless=True, outputs={"raw": {"from": "in1"}}))
IN1 = [
    '{"time": "2024-01-01T00:00:01Z", "symbol": "IBM", "price": 10}',
    '{"time": "2024-01-01T00:00:03Z", "symbol": "ORCL", "price": 30}',
]
IN2 = [
    '{"time": "2024-01-01T00:00:04", "symbol": "MSFT", "price": 40}',
    '{"time": 1704067205, "symbol": "ORCL", "price": 50.5}',
    "",
]


@pytest.fixture
def files(tmp_path):
    (tmp_path / "q1.yaml").write_text(FIGURE_6)
    (tmp_path / "a.ndjson").write_text("\n".join(IN1) + "\n")
    (tmp_path / "b.ndjson").write_text("\n".join(IN2) + "\n")
    return tmp_path


def sluice(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [SLUICE, "run", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def problems(done: subprocess.CompletedProcess) -> list[str]:
    """The ``[CODE] path`` of each problem printed; Spark logs nothing since it never started."""
    assert done.returncode == 2 and done.stdout == ""
    assert "Spark" not in done.stderr
    return [line.split(": ")[0] for line in done.stderr.splitlines()]


@pytest.mark.spark  # Spark in the `sluice run` process, which no fixture tells
def test_run_prints_every_output_tuple_with_its_sources(files):
    done = sluice(files, "q1.yaml", "--input", "in1=a.ndjson", "-i", "in2=b.ndjson")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    results = {(r["_output"], r.get("symbol")): r for r in rows}
    assert len(rows) == len(results) == 5
    assert results[("out1", "ORCL")] == {
        "window_start": "2024-01-01T00:00:00Z",
        "window_end": "2024-01-01T00:00:10Z",
        "symbol": "ORCL",
        "avg_price": 40.25,
        "n": 2,
        "_output": "out1",
        "_sources": ["in1", "in2"],
    }
    assert results[("out1", "MSFT")]["_sources"] == ["in2"]
    assert results[("raw", "IBM")] == {
        "time": "2024-01-01T00:00:01Z",
        "symbol": "IBM",
        "price": 10.0,
        "_output": "raw",
        "_sources": ["in1"],
    }


@pytest.mark.spark  # Spark in the `sluice run` process, which no fixture tells
def test_readable_applies_the_secfilter(files):
    done = sluice(
        files, "q1.yaml", "--input", "in1=a.ndjson", "--input", "in2=b.ndjson", "--readable", "in1"
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted((r["_output"], r["symbol"]) for r in rows) == [
        ("out1", "IBM"),
        ("raw", "IBM"),
        ("raw", "ORCL"),
    ]
    assert {tuple(r["_sources"]) for r in rows} == {("in1",)}


def test_a_bad_diagram_prints_every_problem(files):
    (files / "bad.yaml").write_text(
        FIGURE_6.replace("size: 10s", "size: 10 parsecs")
        .replace("group_by: [symbol]", "group_by: [sym]")
        .replace("version: 1", "version: 3")
    )
    assert problems(sluice(files, "bad.yaml", "--input", "in1=a.ndjson")) == [
        "[UNSUPPORTED_VERSION] version",
        "[INVALID_DURATION] boxes.avg.window.size",
    ]


def test_bad_lines_are_named_by_file_and_line(files):
    (files / "c.ndjson").write_text(
        IN1[0]
        + "\n{not json\n"
        + '{"time": "yesterday", "symbol": "X", "price": 1}\n'
        + '{"symbol": "X", "price": "1"}\n'
        + '{"symbol": "X", "colour": 1}\n'
    )
    assert problems(
        sluice(files, "q1.yaml", "--input", "in1=c.ndjson", "--input", "in2=b.ndjson")
    ) == ["[BAD_JSON] c.ndjson:2"] + [
        f"[TUPLE_INVALID] c.ndjson{line}" for line in (":3", ":4", ":5", ":5")
    ]


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--input", "in1=a.ndjson"], ["[INPUT_MISMATCH] in2"]),
        (
            ["--input", "in1=a.ndjson", "--input", "in2=b.ndjson", "--input", "in3=b.ndjson"],
            ["[INPUT_MISMATCH] in3"],
        ),
        (
            ["--input", "in1=a.ndjson", "--input", "in2=b.ndjson", "--readable", "in1,in7"],
            ["[INPUT_MISMATCH] --readable"],
        ),
        (
            ["--input", "in1=a.ndjson", "--input", "in2=missing.ndjson"],
            ["[FILE_UNREADABLE] missing.ndjson"],
        ),
    ],
)
def test_bad_arguments_are_refused_before_spark(files, args, expected):
    assert problems(sluice(files, "q1.yaml", *args)) == expected


COUNT_CQL = """CREATE DIAGRAM last2;
CREATE STREAM in1 (time timestamp, symbol string, price double) EVENT TIME time;
CREATE STREAM in2 (time timestamp, symbol string, price double) EVENT TIME time;
INSERT INTO out1
SELECT count(*) AS n, avg(price) AS mean FROM in1 [ROWS 2]
UNION
SELECT count(*) AS n, avg(price) AS mean FROM in2 [ROWS 2];
"""


@pytest.mark.spark  # Spark in the `sluice run` process, which no fixture tells
def test_a_cql_script_runs_with_count_windows(files):
    (files / "last2.cql").write_text(COUNT_CQL)
    done = sluice(files, "last2.cql", "--input", "in1=a.ndjson", "-i", "in2=b.ndjson")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted((r["n"], r["mean"], tuple(r["_sources"])) for r in rows) == [
        (1, 10.0, ("in1",)),
        (1, 40.0, ("in2",)),
        (2, 20.0, ("in1",)),
        (2, 45.25, ("in2",)),
    ]


def test_a_bad_cql_script_is_refused_at_its_line_and_column(files):
    (files / "bad.cql").write_text(COUNT_CQL.replace("avg(price)", "avg(symbol)", 1))
    assert problems(sluice(files, "bad.cql", "--input", "in1=a.ndjson")) == [
        "[TYPE_MISMATCH] cql.5.23"
    ]


@pytest.mark.spark  # Spark in the `sluice run` process, which no fixture tells
def test_a_cql_join_of_count_windows_runs(files):
    """000's Q6: each receipt and send paired as it enters its window (``test_cql_q6.py``)."""
    from tests.boxes.cql.test_cql_papers import LOG, Q6, STREAM

    (files / "q6.cql").write_text(STREAM + Q6)
    (files / "log.ndjson").write_text("".join(json.dumps(r, default=str) + "\n" for r in LOG))
    done = sluice(files, "q6.cql", "--input", "MessageLog=log.ndjson")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted((r["delay"], tuple(r["_sources"])) for r in rows) == [
        (-3.0, ("MessageLog",)),
        (1.0, ("MessageLog",)),
    ]
