"""Checkpoint directories through ``storage.Location``: on a local disk, by ``file://`` URL and on
a real S3 API (moto's server on loopback)."""

from __future__ import annotations

import json

import pytest
from runtime_helpers import TRADE, plan_of, union_doc

from boxes.errors import SluiceError
from server.ingest.segments import Position
from server.runtime.checkpoints import Diagrams, committed_offsets
from server.runtime.storage import Location, hadoop_url


@pytest.fixture(params=["path", "file-url", "s3"])
def root(request, tmp_path):
    if request.param == "path":
        return str(tmp_path / "state")
    if request.param == "file-url":
        return f"file://{tmp_path}/state"
    return request.getfixturevalue("s3_url")


def spark_offsets(ends: dict[str, int]) -> bytes:
    """An offsets file as Spark writes one: a version line, the batch's metadata, a source's
    offset (the ingestion log source's: a position per stream)."""
    offset = {name: {"seq": seq, "seg": 0, "pos": 0} for name, seq in ends.items()}
    return (
        b"v1\n" + json.dumps({"batchWatermarkMs": 0}).encode() + b"\n" + json.dumps(offset).encode()
    )


def commit(checkpoint: Location, batch_id: int, ends: dict[str, int]) -> None:
    checkpoint.child("offsets", str(batch_id)).put(spark_offsets(ends))
    checkpoint.child("commits", str(batch_id)).put(b"v1\n{}")


def test_a_diagrams_start_claims_and_removal_read_and_write_through_its_location(root):
    diagrams = Diagrams(Location.of(root).child("diagrams"))
    version = diagrams.version("d", "v1")
    assert version.start() is None and diagrams.all() == []
    version.fix_start({"s": Position(3, 0, 40), "t": Position(0, 0, 0)})
    assert version.fix_start({"s": Position(9, 0, 90)})["s"] == Position(3, 0, 40)  # once
    assert [d.version for d in diagrams.versions("d")] == ["v1"]
    assert diagrams.all()[0].start() == {"s": Position(3, 0, 40), "t": Position(0, 0, 0)}

    first, second = version.checkpoint("a"), version.checkpoint("b")
    commit(first, 0, {"s": 7, "t": 2})
    assert committed_offsets(first) == {"s": 7, "t": 2}
    second.child("offsets", "0").put(spark_offsets({"s": 5}))  # started, not committed
    assert version.claims() == {"s": 3, "t": 0}  # output b needs everything from the start
    commit(second, 0, {"s": 5, "t": 4})
    commit(first, 1, {"s": 12, "t": 6})
    assert version.claims() == {"s": 5, "t": 4}

    diagrams.remove("d")
    assert diagrams.all() == [] and not version.checkpoint("a").exists()


def test_result_logs_may_live_apart_from_the_checkpoints(tmp_path, s3_url):
    diagrams = Diagrams(tmp_path / "diagrams", Location.of(s3_url).child("diagrams"))
    version = diagrams.version("d", "v1")
    assert version.checkpoint("out").local
    assert version.results("out").hadoop_url.startswith("s3a://sluice-test/")
    version.fix_start({})
    version.results("out").child("x").put(b"x")
    diagrams.remove("d")
    assert not version.results("out").child("x").exists()


@pytest.mark.parametrize(
    ("url", "hadoop"),
    [
        ("s3://k:s@bucket/state?region=eu-west-1&scheme=http", "s3a://bucket/state"),
        ("gs://bucket/state", "gs://bucket/state"),
        ("hdfs://user@namenode:8020/state?replication=2", "hdfs://namenode:8020/state"),
    ],
)
def test_spark_is_handed_a_hadoop_url_without_pyarrows_options_or_keys(url, hadoop):
    assert hadoop_url(url) == hadoop


@pytest.mark.parametrize("url", ["/srv/state", "file:///srv/state", "/srv/../srv/state"])
def test_a_local_place_is_handed_to_spark_as_the_plain_path_it_always_was(url):
    location = Location.of(url).child("d", "checkpoint")
    assert location.local and location.hadoop_url == "/srv/state/d/checkpoint"
    assert str(location) == location.hadoop_url  # what a log line or message shows


def test_a_place_on_s3_is_named_without_its_keys(s3_url):
    location = Location.of(s3_url).child("d")
    assert "testing:testing" in location.url  # what a Spark source is handed
    assert "testing" not in str(location) and "testing" not in repr(location)
    assert location.hadoop_url.startswith("s3a://sluice-test/")
    assert location.hadoop_url.endswith("/d")


def test_checkpoints_on_s3_are_handed_to_spark_as_s3a_which_needs_hadoop_aws(make_runtime, s3_url):
    """This Spark has no hadoop-aws (docs/deploy.md): the deploy fails, saying so, after the
    diagram's start was written to S3 through pyarrow. (Unshared: the paths are its own.)"""
    runtime = make_runtime(state_url=s3_url, share_plans=False)
    runtime.create_stream("a", TRADE)
    with pytest.raises(SluiceError) as failed:
        runtime.deploy("d", plan_of(union_doc("d", ["a"])), version="v1")
    checkpoint = Location.of(s3_url).child("diagrams", "d", "v1", "outputs", "d_out", "checkpoint")
    assert failed.value.code == "DEPLOY_FAILED"
    assert f"checkpoint file manager for path={checkpoint.hadoop_url}" in str(failed.value)
    assert Location.of(s3_url).child("diagrams", "d", "v1", "start.json").exists()
