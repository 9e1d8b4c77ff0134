"""A quiet stream's time marks (``server/runtime/source.py``), read as the head service reads
them, without Spark: which streams stay quiet, and the time their marks carry."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from runtime_helpers import TRADE, at_level

from boxes.levels import Lattice
from boxes.punctuations.columns import DENIED_COLUMN
from server.ingest import IngestLog
from server.ingest.segments import Frame
from server.runtime import source as source_module
from server.runtime.source import SourceRows, _columns, _source_schema, frame_rows

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
LATTICE = Lattice.of({"co": ["A", "B"]})
A, B = LATTICE.company_mask("A"), LATTICE.company_mask("B")


def trade(second: int) -> dict:
    return {"time": (T0 + timedelta(seconds=second)).isoformat(), "symbol": "x", "price": 1.0}


@pytest.fixture
def log(tmp_path):
    log = IngestLog(tmp_path / "log")
    for name in ("a", "b"):
        log.create_stream(name, TRADE)
    return log


def source(log: IngestLog, **options: str) -> SourceRows:
    return SourceRows(
        {
            "root": str(log.root),
            "streams": json.dumps(["a", "b"]),
            "start": json.dumps({"a": [0, 0, 0], "b": [0, 0, 0]}),
            "time": "time",
            **_source_schema(_columns(TRADE, (DENIED_COLUMN,))),
            **options,
        }
    )


def batch(rows: SourceRows, start: str, log: IngestLog) -> tuple[str, list[tuple]]:
    """The next offset and its rows as (stream, arrival, second)."""
    end = rows.offset(start, log.heads(["a", "b"]))
    table = rows.between(start, end)[0].to_pylist()
    return end, [(r["_stream"], r["_arrival"], (r["time"] - T0).seconds) for r in table]


@pytest.mark.parametrize("level", [None, "A"], ids=["unwritten", "above-the-level"])
def test_a_quiet_stream_is_marked_at_the_latest_time_its_query_sees(log, level):
    clearance = {"clearance": str(LATTICE.clearance((level,)))} if level else {}
    rows = source(log, **clearance)
    log.append("a", [trade(1), trade(5)], at_level(A))
    if level:
        log.append("b", [trade(30)], at_level(B))  # never seen at A, nor its time
    end, got = batch(rows, rows.initial(), log)
    assert [r for r in got if r[0] == 0] == [(0, 0, 1), (0, 1, 5)]
    assert [r for r in got if r[1] == -1] == [(1, -1, 5)]
    assert json.loads(end)["b"]["quiet"] and "quiet" not in json.loads(end)["a"]
    assert rows.between(rows.initial(), end)[0].equals(
        source(log, **clearance).between(rows.initial(), end)[0]
    )  # a batch replayed after a crash carries the same marks


def test_a_stream_that_spoke_is_marked_no_more_and_a_batch_it_cannot_see_marks_nothing(log):
    rows = source(log, clearance=str(LATTICE.clearance(("A",))))
    log.append("b", [trade(1)], at_level(A))
    end, got = batch(rows, rows.initial(), log)
    assert got == [(1, 0, 1), (0, -1, 1)]  # ``a`` is quiet, ``b`` spoke
    log.append("b", [trade(3)], at_level(A))
    log.append("a", [trade(2)], at_level(B))  # still nothing ``a``'s query may see
    end, got = batch(rows, end, log)
    assert got == [(0, 0, 2), (1, 1, 3), (0, -1, 3)]
    log.append("a", [trade(9)], at_level(B))
    assert batch(rows, end, log)[1] == [(0, 1, 9)]  # no tuple seen: no time to carry


def test_an_offset_written_before_the_flags_marks_nothing(log):
    rows = source(log)
    log.append("a", [trade(1)])
    old = json.dumps({n: {"seq": 0, "seg": 0, "pos": 0} for n in ("a", "b")})
    assert batch(rows, old, log)[1] == [(0, 0, 1)]


def test_a_stream_that_spoke_and_is_idle_is_quiet_again_until_it_speaks(log):
    """Idleness: a stream that gives nothing new while idle is marked again (its flag in the
    offset, so a replay decides the same); its next tuple lifts the flag."""
    rows = source(log)
    log.append("a", [trade(1)])
    log.append("b", [trade(2)])
    end, _ = batch(rows, rows.initial(), log)
    log.append("a", [trade(6)])
    busy = rows.offset(end, log.heads(["a", "b"]), idle={"a"})  # ``a`` has news: not idle
    assert all("quiet" not in at for at in json.loads(busy).values())
    idle = rows.offset(end, log.heads(["a", "b"]), idle={"b"})
    assert json.loads(idle)["b"]["quiet"] and "quiet" not in json.loads(idle)["a"]
    got = [
        (r["_stream"], r["_arrival"], (r["time"] - T0).seconds)
        for r in rows.between(end, idle)[0].to_pylist()
    ]
    assert got == [(0, 1, 6), (1, -1, 6)]
    log.append("b", [trade(3)])
    assert "quiet" not in json.loads(rows.offset(idle, log.heads(["a", "b"])))["b"]


def test_a_quiet_stream_far_behind_is_decided_by_its_first_row_the_query_sees(log, monkeypatch):
    """Its next offset is asked for before every read (a real-time task's, after a restart
    far behind): it reads up to the first row its query may see, not the whole range."""
    read: list[Frame] = []

    def counted(frame: Frame, *words):
        read.append(frame)
        return frame_rows(frame, *words)

    monkeypatch.setattr(source_module, "frame_rows", counted)
    rows = source(log)
    for second in range(50):
        log.append("a", [trade(second)])
    end = rows.offset(rows.initial(), log.heads(["a", "b"]))
    assert "quiet" not in json.loads(end)["a"] and json.loads(end)["b"]["quiet"]
    assert len(read) == 1
