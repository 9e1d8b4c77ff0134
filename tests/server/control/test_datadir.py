"""The data directory claim: absolute, exclusive across processes, private on disk."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from boxes.errors import Conflict
from server.control.datadir import LOCK_FILE, claim

HOLD = """
import sys, time
from server.control.datadir import claim
claim(sys.argv[1])
print("held", flush=True)
sys.stdin.read()
"""


def _mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_a_relative_path_is_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    claimed = claim("data")
    try:
        assert claimed.path == tmp_path / "data" and claimed.path.is_absolute()
    finally:
        claimed.release()


def test_a_second_process_is_refused_and_named_until_the_first_ends(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path / "d")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(Conflict) as refused:
            claim(tmp_path / "d")
        assert refused.value.code == "DATA_DIR_IN_USE"
        assert f"pid {holder.pid}" in str(refused.value) and str(tmp_path / "d") in str(
            refused.value
        )
    finally:
        holder.kill()  # a killed holder leaves no stale lock behind
        holder.wait()
    claim(tmp_path / "d").release()


def test_one_process_cannot_claim_twice_either(tmp_path):
    first = claim(tmp_path / "d")
    try:
        with pytest.raises(Conflict):
            claim(tmp_path / "d")
    finally:
        first.release()
    claim(tmp_path / "d").release()


def test_everything_inside_becomes_private(tmp_path):
    root = tmp_path / "d"
    (root / "logs" / "in1").mkdir(parents=True, mode=0o755)
    (root / "catalog.sqlite").write_text("hashes")
    (root / "logs" / "in1" / "0.seg").write_text("rows")
    os.chmod(root, 0o755)
    for path in (root / "catalog.sqlite", root / "logs" / "in1" / "0.seg"):
        os.chmod(path, 0o644)
    claimed = claim(root)
    try:
        assert _mode(root) == 0o700 and _mode(root / "logs" / "in1") == 0o700
        assert _mode(root / "catalog.sqlite") == 0o600 and _mode(root / LOCK_FILE) == 0o600
        assert _mode(root / "logs" / "in1" / "0.seg") == 0o600
        (root / "later").write_text("made after the claim")
        assert _mode(root / "later") == 0o600
    finally:
        claimed.release()
