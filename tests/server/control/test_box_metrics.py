"""Rows in and out per box of a running diagram (issue 19) in its status, on a live server.

The counts come from Spark's observed metrics (boxes/observed.py) and are of every tuple
through a box, so they are shown only for the boxes whose every source the viewer may
READ_TUPLE (docs/editor.md): al sees all of peek's, bob (READ_TUPLE on in1 only) sees in1's
and no output's counters, then nothing once that right is revoked; cy, who may not view the
diagram, is told it does not exist, as everywhere else in the API.
"""

from __future__ import annotations

import functools

import jsonschema
import requests
from peekworld import PEEK, prices, setup_viewers
from serverkit import PASSWORD, Client, wait_until

ALL = ["counts", "dear", "in1", "in2", "merged", "peek_counts", "peek_out"]


def status(client: Client, expect: int = 200) -> dict:
    answer = client.call("GET", "/diagrams/peek/status", expect)
    if expect == 200:  # as the OpenAPI description says, counts, withheld and all
        jsonschema.validate(answer, published(client.base))
    return answer


@functools.cache
def published(base: str) -> dict:
    """The status answer's schema in the server's OpenAPI description."""
    doc = requests.get(f"{base}/api/v1/openapi.json", timeout=30).json()
    ok = doc["paths"]["/api/v1/diagrams/{name}/status"]["get"]["responses"]["200"]
    return ok["content"]["application/json"]["schema"]


def rows(progress: dict) -> dict[str, tuple]:
    return {name: (m["rows_in"], m["rows_out"]) for name, m in progress["boxes"].items()}


def test_box_counts_are_shown_only_to_who_may_read_their_sources(live):
    joe = Client(live.url, "joe", PASSWORD)
    setup_viewers(joe)
    al = Client(live.url, "al", PASSWORD)
    al.call("POST", "/diagrams", 201, json={"document": PEEK})
    al.call("PUT", "/permissions/diagram/peek/READER/VIEW_OBJECT")
    al.call("POST", "/diagrams/peek/deploy")
    ed = Client(live.url, "ed", PASSWORD)
    ed.call("POST", "/streams/in1/tuples", json=prices("in1", 10.0, 20.0, 30.0))
    ed.call("POST", "/streams/in2/tuples", json=prices("in2", 15.0, 25.0))

    expected = {
        "in1": (None, 3),
        "in2": (None, 2),
        "merged": (5, 5),
        "dear": (5, 3),  # price >= 20
        "counts": (5, 0),  # its window has not closed
        "peek_out": (3, 3),
        "peek_counts": (0, 0),
    }

    def settled() -> dict | None:
        progress = status(al)["progress"]
        return progress if rows(progress) == expected else None

    counted = wait_until(settled, timeout=60, what=f"al's box counts {expected}")
    assert counted["withheld"] == [] and sorted(counted["outputs"]) == ["peek_counts", "peek_out"]
    newest = counted["boxes"]["dear"]
    assert newest["batch_rows_in"] <= 5 and newest["batch_rows_out"] <= 3

    bob = Client(live.url, "bob", PASSWORD)
    seen = status(bob)["progress"]
    assert rows(seen) == {"in1": (None, 3)}  # every other box derives from in2 as well
    assert seen["outputs"] == {}  # an output's counters are counts too
    assert seen["withheld"] == [n for n in ALL if n != "in1"]
    joe.call("DELETE", "/permissions/stream/in1/READER/READ_TUPLE")
    revoked = status(bob)["progress"]
    assert revoked["boxes"] == {} and revoked["withheld"] == ALL  # at the very next status

    cy = Client(live.url, "cy", PASSWORD)
    assert status(cy, 404)["error"]["code"] == "NOT_FOUND"  # unseen looks missing
