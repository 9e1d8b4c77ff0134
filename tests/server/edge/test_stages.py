"""The stage log ``bench.fanout`` reads (server/edge/stages.py): one line per stage of a batch,
and one pair (first, last) per batch for its socket writes, however many sockets."""

from __future__ import annotations

import json

from server.edge import stages


def test_a_batchs_writes_to_many_sockets_are_marked_once_first_and_last(tmp_path, monkeypatch):
    log = tmp_path / "stages.jsonl"
    monkeypatch.setattr(stages, "LOG", str(log))
    monkeypatch.setattr(stages.Writes, "QUIET", 0.0)
    stages.mark("handoff", "o", 7, 1.5)
    writes = stages.Writes()
    for _ in range(1000):
        writes.wrote("o", 7)
    writes.flush()
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(m["stage"], m["output"], m["next"]) for m in lines] == [
        ("handoff", "o", 7),
        ("first_write", "o", 7),
        ("last_write", "o", 7),
    ]
    assert lines[0]["t"] == 1.5 and lines[1]["t"] <= lines[2]["t"]


def test_without_a_log_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.setattr(stages, "LOG", None)
    monkeypatch.chdir(tmp_path)
    stages.mark("handoff", "o", 7)
    assert list(tmp_path.iterdir()) == []
