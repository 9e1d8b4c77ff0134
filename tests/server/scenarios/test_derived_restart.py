"""A derived stream across a crash: ``sluice serve --demo`` killed (SIGKILL) and started again.

al builds ``again`` on his q1's output ``out1`` (a filter every result passes). Both diagrams
resume from their checkpoints after the kill; ``again``'s result log then holds the results of
``out1`` from where it started reading, in order, each exactly once, with their sources.
(Result logs on S3 across a restart: ``tests/server/runtime/test_derived_runtime.py``; a torn
upload: ``test_resultlog.py``.)
"""

from __future__ import annotations

import json

import pytest
from serverkit import Client, wait_until

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


@pytest.mark.spark  # Spark in the `sluice serve` process, which no fixture tells
def test_a_derived_output_holds_each_upstream_result_once_across_a_kill(serve):
    server = serve(demo=True, spark_master="local[2]")
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
