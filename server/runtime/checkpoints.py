"""Where a deployed diagram keeps its state, and what of the input logs it still needs.

``<root>/<diagram>/<version>/`` holds ``start.json`` (the log positions the diagram started
from, fixed once so a first batch replayed after a crash starts at the same place) and, per
output, a Spark ``checkpoint`` and a ``results`` log. The version changes with the diagram,
so a changed diagram never meets an old checkpoint. The root may be any ``storage.Location``
(a local directory or an object store); a version kept there is a retention
claim: the ingestion log keeps every row a stopped diagram has not yet consumed.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

import pyarrow.fs as pafs

from boxes import codes
from boxes.errors import InvalidInput
from server.ingest.segments import Position
from server.runtime.storage import Location

DIAGRAM_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
START_FILE = "start.json"
PLAN_FILE = "plan"  # the fingerprint of the plan a legacy version was resumed with
SHARED_FILE = "shared.json"  # a member of a shared execution: its host and where it joined
RESIDUALS_FILE = "residuals.json"  # a prefix host: its members' filters (``overlap.py``)
MODE_FILE = "mode.json"  # beside an output's checkpoint: the mode it runs in (``modes.py``)
ONE_SCAN_FILE = "sluice-one-scan"  # in an output's checkpoint: its query reads unions as one scan
# in a real-time output's checkpoint: its query reads a union's streams by one source
UNION_SOURCE_FILE = "sluice-union-source"


def check_id(diagram_id: str) -> str:
    if not isinstance(diagram_id, str) or not DIAGRAM_ID.match(diagram_id) or ".." in diagram_id:
        raise InvalidInput(
            f"diagram id {diagram_id!r} must be letters, digits, '_', '.' or '-'",
            code=codes.INVALID_NAME,
        )
    return diagram_id


class DiagramDir:
    """One version of a deployed diagram: its checkpoints under ``root``, its result logs
    under ``results_root`` (by default the same place; see ``storage.py``)."""

    def __init__(
        self,
        root: str | os.PathLike,
        diagram_id: str,
        version: str,
        results_root: str | os.PathLike | None = None,
    ) -> None:
        self.diagram_id = check_id(diagram_id)
        self.version = version
        self.path = Location.of(root).child(diagram_id, version)
        self.results_path = (
            self.path
            if results_root is None
            else Location.of(results_root).child(diagram_id, version)
        )

    def checkpoint(self, output: str) -> Location:
        """Where Spark keeps the output's query checkpoint (its ``hadoop_url``)."""
        return self.path.child("outputs", output, "checkpoint")

    def results(self, output: str) -> Location:
        return self.results_path.child("outputs", output, "results")

    def residual_results(self, residual: str) -> Location:
        """A prefix host's log of one residual's rows of its one output (``overlap.py``)."""
        return self.results_path.child("residuals", residual, "results")

    def residuals(self) -> dict[str, dict]:
        """A prefix host's residuals: per name, what ``overlap.Residual.stored`` gives."""
        path = self.path.child(RESIDUALS_FILE)
        return json.loads(path.read_text()) if path.exists() else {}

    def keep_residuals(self, residuals: dict[str, dict]) -> None:
        self.path.child(RESIDUALS_FILE).put(json.dumps(residuals, sort_keys=True).encode())

    def start(self) -> dict[str, Position] | None:
        path = self.path.child(START_FILE)
        if not path.exists():
            return None
        return {name: Position.from_list(p) for name, p in json.loads(path.read_text()).items()}

    def fix_start(self, heads: dict[str, Position]) -> dict[str, Position]:
        """Record the start positions once (durably); later calls return the recorded ones."""
        recorded = self.start()
        if recorded is not None:
            return recorded
        self.path.child(START_FILE).put(
            json.dumps({name: pos.to_list() for name, pos in heads.items()}).encode()
        )
        return heads

    def bound(self) -> str | None:
        """The fingerprint of the plan this version was bound to (``bind``), if any."""
        path = self.path.child(PLAN_FILE)
        return path.read_text() if path.exists() else None

    def bind(self, fingerprint: str) -> None:
        """Tie a version named otherwise (``runner.legacy_fingerprint``) to one plan."""
        self.path.child(PLAN_FILE).put(fingerprint.encode())

    def membership(self) -> dict | None:
        """``{"key", "bases", "stopped_at", "residual"}`` if this version is a member of a
        shared execution: the host's key, per output the host's result-log position it
        joined at, if it was stopped the host's position it had been handed rows up to, and
        the name of its residual if the host runs its prefix (``overlap.py``)."""
        path = self.path.child(SHARED_FILE)
        return json.loads(path.read_text()) if path.exists() else None

    def join(
        self,
        key: str,
        bases: dict[str, int],
        stopped_at: dict[str, int] | None = None,
        residual: str | None = None,
    ):
        """Record, durably, that this version reads the host ``key``'s outputs from ``bases``
        (and, once stopped, where to go on from)."""
        member = {"key": key, "bases": bases, "stopped_at": stopped_at, "residual": residual}
        self.path.child(SHARED_FILE).put(json.dumps(member).encode())

    def adopt(
        self, output: str, checkpoint: Location, results: Location, mode: dict | None = None
    ) -> None:
        """Take over another version's ``checkpoint`` and ``results`` for ``output`` (copied,
        the other version stopped), so the output resumes where that one was; and the
        mode that version ran it in, if it recorded one (``modes.Mode``): the checkpoint is of
        that mode (a real-time query's offsets are not a micro-batch's), so it runs so here
        too, whatever slots are free now."""
        for source, target in (
            (checkpoint, self.checkpoint(output)),
            (results, self.results(output)),
        ):
            target.delete()
            _copy_tree(source, target)
        _moved_state_schemas(checkpoint, self.checkpoint(output))
        if mode is not None:
            self.keep_mode(output, mode)

    def mode(self, output: str) -> dict | None:
        """How the output first ran in this version (``modes.Mode`` as a dict): its query's
        checkpoint is of that mode, so it runs so for good."""
        path = self.path.child("outputs", output, MODE_FILE)
        return json.loads(path.read_text()) if path.exists() else None

    def keep_mode(self, output: str, mode: dict) -> None:
        self.path.child("outputs", output, MODE_FILE).put(json.dumps(mode).encode())

    def ran_alone(self) -> bool:
        """Whether this version has queries of its own (checkpoints): it then stays alone."""
        return bool(self.path.child("outputs").names())

    def claims(self) -> dict[str, int]:
        """Per input stream, the first row some output of this diagram has not yet consumed."""
        claims = {name: pos.seq for name, pos in (self.start() or {}).items()}
        outputs = self.path.child("outputs")
        committed = [committed_offsets(outputs.child(o, "checkpoint")) for o in outputs.names()]
        ends = [c for c in committed if c is not None]
        if not ends or len(ends) < len(committed):
            return claims  # an output that has committed nothing needs everything from the start
        return {name: min(c.get(name, seq) for c in ends) for name, seq in claims.items()}

    def remove(self) -> None:
        self.path.delete()
        if self.results_path != self.path:
            self.results_path.delete()


def committed_offsets(checkpoint: Location) -> dict[str, int] | None:
    """The end ``seq`` per stream of the query's last committed batch; None before the first."""
    last = last_commit(checkpoint)
    return None if last is None else _end_seqs(checkpoint.child("offsets", str(last)))


def last_commit(checkpoint: Location) -> int | None:
    """The query's last committed batch (a real-time query's epoch); None before the first."""
    commits = [int(name) for name in checkpoint.child("commits").names() if name.isdigit()]
    return max(commits, default=None)


def settle_one_scan(checkpoint: Location) -> bool:
    """Decide, once for good, whether an output's query reads a union as one scan
    (``boxes/onescan.py``), and record it in the checkpoint: whether it does.

    Spark refuses a checkpoint whose batches were logged with another number of sources, and
    a union read in branches has a source per branch. So a checkpoint that logged a batch
    without ``ONE_SCAN_FILE`` (its query started before unions were one scan) keeps its
    branches; a new one is given the file now, before its first batch, and the file goes
    wherever the checkpoint is copied (``DiagramDir.adopt``). Only for a query that is not
    running."""
    return _settle(checkpoint, ONE_SCAN_FILE)


def settle_union_source(checkpoint: Location) -> bool:
    """Decide, once for good, whether a real-time output's query reads the streams of a union
    read as one scan by one source (``onescan.real_time_sources``), as ``settle_one_scan``
    does for micro-batches: a checkpoint that logged an epoch before (a source per stream)
    keeps a source per stream."""
    return _settle(checkpoint, UNION_SOURCE_FILE)


def _settle(checkpoint: Location, marker_name: str) -> bool:
    marker = checkpoint.child(marker_name)
    if marker.exists():
        return True
    if any(name.isdigit() for name in checkpoint.child("offsets").names()):
        return False
    marker.put(b"")
    return True


def discard_partial_writes(checkpoint: Location) -> None:
    """Remove the temporary files of offset and commit writes that never finished (a query
    stopped or killed while writing one; Spark renames a finished write into place). Spark
    ignores them, except before the first batch: then it takes the checkpoint for a new one
    that is not empty and refuses to start, for ever. Only for a query that is not running."""
    for log in ("offsets", "commits"):
        for name in checkpoint.child(log).names():
            if name.startswith(".") and name.endswith(".tmp"):
                checkpoint.child(log, name).delete()


def batch_offsets(checkpoint: Location, batch_id: int) -> dict[str, int] | None:
    """The end ``seq`` per stream of batch ``batch_id``, which Spark records before running it."""
    path = checkpoint.child("offsets", str(batch_id))
    return _end_seqs(path) if path.exists() else None


def _end_seqs(offsets: Location) -> dict[str, int]:
    """Spark's offsets file: two header lines, then one JSON offset per source."""
    seqs: dict[str, int] = {}
    for line in offsets.read_text().splitlines()[2:]:
        for name, seq in offset_seqs(json.loads(line)).items():
            seqs[name] = min(seqs.get(name, seq), seq)
    return seqs


def offset_seqs(offset: Mapping[str, Any]) -> dict[str, int]:
    """Per log key, the row position one source's offset reads up to: a micro-batch source's
    ``{key: {"seq": ...}}`` (``source.py``); or a real-time source's ``{"at": that as text,
    "skip": {key: rows}}``, per log the rows read past ``at`` (``RealTimeLogStream.java``; a
    stream named "at" has a position, not text). A real-time offset logged before a source
    read several streams says ``"skip": rows``: its source read one log, whose count it is."""
    if isinstance(offset.get("at"), str):
        at = offset_seqs(json.loads(offset["at"]))
        skip = offset["skip"]
        if not isinstance(skip, Mapping):
            skip = dict.fromkeys(at, skip) if len(at) == 1 else {}
        return {key: seq + int(skip.get(key, 0)) for key, seq in at.items()}
    return {key: int(position["seq"]) for key, position in offset.items()}


def _moved_state_schemas(source: Location, target: Location) -> None:
    """Spark's operator metadata (``state/<op>/_metadata/v2``) names its state schema files
    by absolute path: a copied checkpoint must name its own copies."""
    for operator in target.child("state").names():
        metadata = target.child("state", operator, "_metadata", "v2")
        for name in metadata.names():
            file = metadata.child(name)
            text = file.read_text()
            if source.path in text:
                file.put(text.replace(source.path, target.path).encode())


def _copy_tree(source: Location, target: Location) -> None:
    """Copy the directory ``source`` (if there is one) and all under it to ``target``."""
    found = source.fs.get_file_info(
        pafs.FileSelector(source.path, allow_not_found=True, recursive=True)
    )
    target.fs.create_dir(target.path, recursive=True)
    for info in sorted(found, key=lambda i: i.path):
        there = target.path + info.path[len(source.path) :]
        if info.type == pafs.FileType.Directory:
            target.fs.create_dir(there, recursive=True)
        else:
            pafs.copy_files(info.path, there, source.fs, target.fs)


class Diagrams:
    """Every deployed diagram's versions: checkpoints under ``root``, result logs under
    ``results_root`` (default: beside the checkpoints)."""

    def __init__(
        self, root: str | os.PathLike, results_root: str | os.PathLike | None = None
    ) -> None:
        self.root = Location.of(root)
        self.results_root = None if results_root is None else Location.of(results_root)

    def version(self, diagram_id: str, version: str) -> DiagramDir:
        return DiagramDir(self.root, diagram_id, version, self.results_root)

    def versions(self, diagram_id: str) -> list[DiagramDir]:
        return [self.version(diagram_id, v) for v in self.root.child(check_id(diagram_id)).names()]

    def all(self) -> list[DiagramDir]:
        return [d for name in self.root.names() for d in self.versions(name)]

    def remove(self, diagram_id: str) -> None:
        """Forget every version of a diagram, and the directories that held them."""
        for root in (self.root, self.results_root):
            if root is not None:
                root.child(check_id(diagram_id)).delete()
