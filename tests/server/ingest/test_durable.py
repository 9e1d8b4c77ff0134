"""The one durable replace, on real files: content, no temporary left, and the fsync order.

``os.fsync`` and ``os.replace`` are wrapped (not replaced) to record what was flushed when:
the file before the rename, its directory after it. Both writers of small durable files
(the log's ``schema.json``, a diagram's ``start.json``) go through it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from boxes.types import parse_schema
from server.ingest.durable import make_dirs_durably, write_durably
from server.ingest.log import IngestLog
from server.ingest.segments import Position
from server.runtime.checkpoints import DiagramDir


@pytest.fixture
def events(monkeypatch):
    """Every fsync (by the path its fd names) and replace, in order."""
    seen: list[tuple[str, str]] = []
    fsync, replace = os.fsync, os.replace

    def recording_fsync(fd):
        seen.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        fsync(fd)

    def recording_replace(src, dst):
        replace(src, dst)
        seen.append(("replace", str(dst)))

    monkeypatch.setattr(os, "fsync", recording_fsync)
    monkeypatch.setattr(os, "replace", recording_replace)
    return seen


def test_a_replace_leaves_the_new_content_and_no_temporary(tmp_path):
    target = tmp_path / "state.json"
    target.write_text("old")
    write_durably(target, '{"new": true}')
    assert target.read_text() == '{"new": true}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def test_the_file_is_flushed_before_the_rename_and_the_directory_after(tmp_path, events):
    target = tmp_path / "state.json"
    write_durably(target, "x")
    assert events == [
        ("fsync", str(tmp_path / "state.json.tmp")),
        ("replace", str(target)),
        ("fsync", str(tmp_path)),
    ]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "state.json"
    target.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        write_durably(target, "\udc80 cannot be encoded")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def _schema_file(root: Path) -> Path:
    schema = parse_schema({"fields": {"x": "long"}}, "s")[0]
    log = IngestLog(root)
    try:
        log.create_stream("s", schema)
    finally:
        log.close()
    return root / "s" / "schema.json"


def _start_file(root: Path) -> Path:
    DiagramDir(root, "d", "v1").fix_start({"s": Position(3, 0, 40)})
    return root / "d" / "v1" / "start.json"


@pytest.mark.parametrize("write", [_schema_file, _start_file], ids=["log schema", "diagram start"])
def test_every_durable_file_has_its_directory_flushed_after_its_rename(tmp_path, events, write):
    path = write(tmp_path)
    renamed = events.index(("replace", str(path)))
    assert ("fsync", str(path.parent)) in events[renamed:]
    assert not path.with_name(path.name + ".tmp").exists()


def test_new_directories_are_flushed_into_their_parents(tmp_path, events):
    make_dirs_durably(tmp_path / "a" / "b")
    make_dirs_durably(tmp_path / "a" / "b")  # existing: nothing to flush
    assert events == [("fsync", str(tmp_path)), ("fsync", str(tmp_path / "a"))]


@pytest.mark.parametrize("write", [_schema_file, _start_file], ids=["stream", "diagram version"])
def test_a_new_stream_or_diagram_directory_is_flushed_before_its_first_file(
    tmp_path, events, write
):
    path = write(tmp_path)
    created = events.index(("fsync", str(path.parent.parent)))
    assert created < events.index(("replace", str(path)))
