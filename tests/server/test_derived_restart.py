"""A derived stream across a crash: ``sluice serve --demo`` killed (SIGKILL) and started again.

al builds ``again`` on his q1's output ``out1`` (a filter every result passes). Both diagrams
resume from their checkpoints after the kill; ``again``'s result log then holds the results of
``out1`` from where it started reading, in order, each exactly once, with their sources: with
the result logs in the data directory, and on S3 (moto's server, reached by the server process
over loopback; Spark's checkpoints stay local).
"""

from __future__ import annotations

import json

import pytest
from pyarrow.fs import FileSelector
from serverkit import Client, wait_until

from server.runtime.resultlog import OBJECT_SUFFIX
from server.runtime.storage import Location

AGAIN = {
    "version": 1,
    "name": "again",
    "inputs": {"q": {"output": "out1"}},
    "boxes": {"all": {"type": "filter", "in": "q", "where": "n > 0"}},
    "outputs": {"out2": {"from": "all"}},
}


def logged(user: Client, output: str) -> list[tuple]:
    """Every result an output's log holds, as (window, symbol, count, sources)."""
    rows, at = [], 0
    while True:
        read = user.call("GET", f"/outputs/{output}/results?from={at}&limit=10000")
        rows += [
            (t["window_start"], t["symbol"], t["n"], tuple(t["_sources"])) for t in read["tuples"]
        ]
        if read["next"] == at:
            return rows
        at = read["next"]


@pytest.mark.parametrize("results", ["local", "s3"])
def test_a_derived_output_holds_each_upstream_result_once_across_a_kill(serve, request, results):
    places = {"results_url": request.getfixturevalue("s3_url")} if results == "s3" else {}
    server = serve(demo=True, spark_master="local[2]", **places)
    server.start()
    logins = json.loads((server.data / "demo_logins.json").read_text())
    al = Client(server.url, "al", logins["al"])
    al.call("POST", "/diagrams", 201, json={"document": AGAIN})
    al.call("POST", "/diagrams/again/deploy", timeout=180)
    wait_until(lambda: len(logged(al, "out2")) >= 2, 180, "derived results")
    server.kill()
    server.start()
    assert al.call("GET", "/diagrams/again/status")["status"] == "running"
    before = len(logged(al, "out2"))
    wait_until(lambda: len(logged(al, "out2")) >= before + 6, 180, "derived results after it")
    derived, upstream = logged(al, "out2"), logged(al, "out1")
    assert len(set(derived)) == len(derived)  # none twice
    first = upstream.index(derived[0])
    assert upstream[first : first + len(derived)] == derived  # none lost, in order
    assert {sources for *_, sources in derived} <= {("in1",), ("in2",), ("in1", "in2")}
    if places:
        assert {"out1", "out2"} <= outputs_logged_at(places["results_url"])


def outputs_logged_at(url: str) -> set[str]:
    """The outputs with batch objects under ``url`` (``<diagram>/<version>/outputs/<output>/
    results/<first row>.frame``)."""
    place = Location.of(url)
    found = place.fs.get_file_info(FileSelector(place.path, recursive=True))
    return {f.path.split("/")[-3] for f in found if f.path.endswith(OBJECT_SUFFIX)}
