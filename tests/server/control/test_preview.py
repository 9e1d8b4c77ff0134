"""The editor's data preview of a box (issue 19) on a live server (real Spark, HTTP).

al owns a running diagram over in1 and in2 (a union, a filter on it, a count per 10 s
window of the union). bob may view the diagram and READ_TUPLE only in1; cy may not view it.
A preview shows each viewer exactly what an output would: al sees both streams' tuples, bob
only in1's and no count (every count derives from in2 too), and nothing once his READ_TUPLE on
in1 is revoked; cy is told the diagram does not exist.
"""

from __future__ import annotations

from peekworld import PEEK, prices, setup_viewers
from serverkit import PASSWORD, Client


def peek(client: Client, box: str, expect: int = 200, query: str = "") -> dict:
    return client.call("GET", f"/diagrams/peek/boxes/{box}/preview{query}", expect)


def seen(answer: dict) -> list[tuple]:
    return sorted((t["symbol"], t["price"], tuple(t["_sources"])) for t in answer["tuples"])


def test_a_preview_shows_each_viewer_only_what_an_output_would(live):
    joe = Client(live.url, "joe", PASSWORD)
    setup_viewers(joe)
    al = Client(live.url, "al", PASSWORD)
    al.call("POST", "/diagrams", 201, json={"document": PEEK})
    al.call("PUT", "/permissions/diagram/peek/READER/VIEW_OBJECT")
    refused = peek(al, "merged", 409)
    assert refused["error"]["code"] == "PREVIEW_NOT_RUNNING"

    al.call("POST", "/diagrams/peek/deploy")
    ed = Client(live.url, "ed", PASSWORD)
    ed.call("POST", "/streams/in1/tuples", json=prices("in1", 10.0, 20.0, 30.0))
    ed.call("POST", "/streams/in2/tuples", json=prices("in2", 15.0, 25.0))

    both = [("in1", p, ("in1",)) for p in (10.0, 20.0, 30.0)]
    both += [("in2", p, ("in2",)) for p in (15.0, 25.0)]
    assert seen(peek(al, "merged")) == sorted(both)
    assert seen(peek(al, "dear")) == [("in1", 20.0, ("in1",)), ("in1", 30.0, ("in1",))] + [
        ("in2", 25.0, ("in2",))
    ]
    assert seen(peek(al, "peek_out")) == seen(peek(al, "dear"))  # an output shows its box
    fields = peek(al, "dear")["fields"]  # the box's columns in its order, then the sources
    assert sorted(fields[:-1]) == ["price", "symbol", "time"] and fields[-1] == "_sources"
    assert seen(peek(al, "in2")) == [("in2", 15.0, ("in2",)), ("in2", 25.0, ("in2",))]
    (window,) = peek(al, "counts")["tuples"]  # a batch run closes the window
    assert (window["n"], window["_sources"]) == (5, ["in1", "in2"])
    newest = peek(al, "in1", query="?rows=2")["tuples"]
    assert [t["price"] for t in newest] == [20.0, 30.0]

    bob = Client(live.url, "bob", PASSWORD)
    assert seen(peek(bob, "merged")) == [("in1", p, ("in1",)) for p in (10.0, 20.0, 30.0)]
    assert peek(bob, "counts")["tuples"] == []  # every count derives from in2 as well
    assert peek(bob, "in2")["tuples"] == []
    joe.call("DELETE", "/permissions/stream/in1/READER/READ_TUPLE")
    assert peek(bob, "merged")["tuples"] == []  # revoked: the very next preview

    cy = Client(live.url, "cy", PASSWORD)
    assert peek(cy, "merged", 404)["error"]["code"] == "NOT_FOUND"  # unseen looks missing
    missing = peek(al, "nothing", 404)["error"]
    assert missing["code"] == "NOT_FOUND" and "box" in missing["message"]
    for bad in ("?rows=0", "?rows=1001", "?rows=x"):
        assert peek(al, "merged", 400, bad)["error"]["code"] == "INVALID_PARAMETER"

    al.call("POST", "/diagrams/peek/stop")
    assert peek(al, "merged", 409)["error"]["code"] == "PREVIEW_NOT_RUNNING"
