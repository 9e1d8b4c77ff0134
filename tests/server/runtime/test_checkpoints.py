"""What a diagram's checkpoints say it still needs of its inputs' logs (``checkpoints.py``),
read from Spark's offsets files as either kind of query writes them."""

from __future__ import annotations

import json

from server.ingest.segments import Position
from server.runtime.checkpoints import DiagramDir


def committed(directory: DiagramDir, output: str, offset: dict) -> None:
    """A checkpoint whose batch 0 is committed with ``offset`` for its one source, in Spark's
    offsets file layout (a version line, the batch's metadata, one line per source)."""
    checkpoint = directory.checkpoint(output)
    checkpoint.child("offsets", "0").put(
        f'v1\n{{"batchWatermarkMs":0}}\n{json.dumps(offset)}'.encode()
    )
    checkpoint.child("commits", "0").put(b'v1\n{"nextBatchWatermarkMs":0}')


def test_claims_read_micro_batch_and_real_time_offsets_alike(tmp_path):
    """A real-time query's offset is a position and the rows read past it (``{"at", "skip"}``,
    ``RealTimeLogStream.java``): its diagram still needs its stream from there on. Read as
    positions, it failed compaction for every stream while such a diagram was deployed."""
    position = {"seq": 40, "seg": 0, "pos": 4096}
    micro, rt = DiagramDir(tmp_path, "micro", "v1"), DiagramDir(tmp_path, "rt", "v1")
    for directory, stream in ((micro, "in1"), (rt, "in2")):
        directory.fix_start({stream: Position(0, 0, 0)})
    committed(micro, "out", {"in1": position})
    committed(rt, "out", {"at": json.dumps({"in2": position}), "skip": 7})
    assert (micro.claims(), rt.claims()) == ({"in1": 40}, {"in2": 47})


def test_a_real_time_offset_of_several_streams_counts_each_streams_rows(tmp_path):
    """A real-time source that reads a union's streams (``modes.py``) counts the rows handed on
    past ``at`` per stream: each stream's claim is its own position and its own count."""
    at = {"in1": {"seq": 40, "seg": 0, "pos": 4096}, "in2": {"seq": 9, "seg": 0, "pos": 512}}
    rt = DiagramDir(tmp_path, "rt", "v1")
    rt.fix_start({"in1": Position(0, 0, 0), "in2": Position(0, 0, 0)})
    committed(rt, "out", {"at": json.dumps(at), "skip": {"in1": 3, "in2": 0}})
    assert rt.claims() == {"in1": 43, "in2": 9}
