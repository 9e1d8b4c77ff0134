"""The diagram the swap tests replace while it runs: a filter before a count window."""

from __future__ import annotations

from serverkit import PASSWORD, Client, wait_until

SCHEMA = {"name": "s", "fields": {"t": "timestamp", "k": "string", "x": "long"}, "event_time": "t"}
DOC = {
    "version": 1,
    "name": "q",
    "inputs": {"in1": {}},
    "boxes": {
        "kept": {"type": "filter", "in": "in1", "where": "x > 0"},
        "n": {
            "type": "aggregate",
            "in": "kept",
            "window": {"rows": 3},  # per row, the count of the last three
            "group_by": ["k"],
            "aggregates": {"c": "count()"},
        },
    },
    "outputs": {"counts": {"from": "n"}},
}


def changed(doc: dict, box: str, **change) -> dict:
    """``doc`` with these settings of ``box`` changed."""
    return {**doc, "boxes": {**doc["boxes"], box: {**doc["boxes"][box], **change}}}


def rows(*xs: int) -> list[dict]:
    """Tuples of key ``a`` with these ``x``, a second apart."""
    return [{"t": f"2026-01-01T00:00:{i:02d}Z", "k": "a", "x": x} for i, x in enumerate(xs)]


def counting(url: str) -> Client:
    """joe runs ``DOC`` on the live server at ``url``, is subscribed to its ``counts``, and
    has sent two tuples, whose two counts are out."""
    joe = Client(url, "joe", PASSWORD)
    joe.call("POST", "/schemas", 201, json=SCHEMA)
    joe.call("POST", "/streams", 201, json={"name": "in1", "schema": "s"})
    joe.call("POST", "/diagrams", 201, json={"document": DOC})
    joe.call("POST", "/diagrams/q/deploy")
    joe.connect()
    assert joe.emit("subscribe", {"output": "counts"}) == {"subscribed": "counts"}
    joe.call("POST", "/streams/in1/tuples", json=rows(5, 5))
    wait_until(lambda: len(joe.positions) and joe.positions[-1] == 2, 300, "the first counts")
    return joe
