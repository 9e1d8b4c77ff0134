"""The diagram the swap tests replace while it runs: a filter before a count window."""

from __future__ import annotations

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
