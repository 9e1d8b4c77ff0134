"""Where a deployed diagram keeps its state on disk, and what of the input logs it still needs.

``<root>/<diagram>/<version>/`` holds ``start.json`` (the log positions the diagram started
from, fixed once so a first batch replayed after a crash starts at the same place) and, per
output, a Spark ``checkpoint`` and a ``results`` log. The version changes with the diagram,
so a changed diagram never meets an old checkpoint. A directory on disk is a retention
claim: the ingestion log keeps every row a stopped diagram has not yet consumed.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from boxes import codes
from boxes.errors import InvalidInput
from server.ingest.durable import make_dirs_durably, write_durably
from server.ingest.segments import Position

DIAGRAM_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
START_FILE = "start.json"


def check_id(diagram_id: str) -> str:
    if not isinstance(diagram_id, str) or not DIAGRAM_ID.match(diagram_id) or ".." in diagram_id:
        raise InvalidInput(
            f"diagram id {diagram_id!r} must be letters, digits, '_', '.' or '-'",
            code=codes.INVALID_NAME,
        )
    return diagram_id


class DiagramDir:
    def __init__(self, root: Path, diagram_id: str, version: str) -> None:
        self.path = Path(root) / check_id(diagram_id) / version
        self.version = version

    def checkpoint(self, output: str) -> Path:
        return self.path / "outputs" / output / "checkpoint"

    def results(self, output: str) -> Path:
        return self.path / "outputs" / output / "results"

    def start(self) -> dict[str, Position] | None:
        path = self.path / START_FILE
        if not path.exists():
            return None
        return {name: Position.from_list(p) for name, p in json.loads(path.read_text()).items()}

    def fix_start(self, heads: dict[str, Position]) -> dict[str, Position]:
        """Record the start positions once (durably); later calls return the recorded ones."""
        recorded = self.start()
        if recorded is not None:
            return recorded
        make_dirs_durably(self.path)
        write_durably(
            self.path / START_FILE, json.dumps({name: pos.to_list() for name, pos in heads.items()})
        )
        return heads

    def claims(self) -> dict[str, int]:
        """Per input stream, the first row some output of this diagram has not yet consumed."""
        claims = {name: pos.seq for name, pos in (self.start() or {}).items()}
        outputs = self.path / "outputs"
        committed = [committed_offsets(c) for c in outputs.glob("*/checkpoint")]
        if not committed or None in committed:
            return claims  # an output that has committed nothing needs everything from the start
        return {name: min(c.get(name, seq) for c in committed) for name, seq in claims.items()}


def committed_offsets(checkpoint: Path) -> dict[str, int] | None:
    """The end ``seq`` per stream of the query's last committed batch; None before the first."""
    commits = [int(p.name) for p in (checkpoint / "commits").glob("[0-9]*") if p.name.isdigit()]
    if not commits:
        return None
    return _end_seqs(checkpoint / "offsets" / str(max(commits)))


def batch_offsets(checkpoint: Path, batch_id: int) -> dict[str, int] | None:
    """The end ``seq`` per stream of batch ``batch_id``, which Spark records before running it."""
    path = checkpoint / "offsets" / str(batch_id)
    return _end_seqs(path) if path.exists() else None


def _end_seqs(offsets: Path) -> dict[str, int]:
    """Spark's offsets file: two header lines, then one JSON offset per source."""
    seqs: dict[str, int] = {}
    for line in offsets.read_text().splitlines()[2:]:
        for name, pos in json.loads(line).items():
            seqs[name] = min(seqs.get(name, pos["seq"]), pos["seq"])
    return seqs


def versions(root: Path, diagram_id: str) -> list[DiagramDir]:
    base = Path(root) / check_id(diagram_id)
    return [DiagramDir(root, diagram_id, p.name) for p in base.iterdir()] if base.exists() else []


def all_dirs(root: Path) -> list[DiagramDir]:
    root = Path(root)
    return [d for p in root.iterdir() for d in versions(root, p.name)] if root.exists() else []


def remove(directory: DiagramDir) -> None:
    shutil.rmtree(directory.path, ignore_errors=True)
