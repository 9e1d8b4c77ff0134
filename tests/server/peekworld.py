"""The world of the editor's per-box tests (preview, metrics): al owns a diagram over in1 and
in2 (a union, a filter on it, a count per 10 s window of the union); bob's role READER may
READ_TUPLE only in1; cy's role OTHER sees no diagram; ed (FEED) writes both streams."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from serverkit import PASSWORD, Client

EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)
PEEK = {
    "version": 1,
    "name": "peek",
    "inputs": {"in1": {}, "in2": {}},
    "boxes": {
        "merged": {"type": "union", "in": ["in1", "in2"]},
        "dear": {"type": "filter", "in": "merged", "where": "price >= 20"},
        "counts": {
            "type": "aggregate",
            "in": "merged",
            "window": {"size": "10s"},
            "aggregates": {"n": "count()"},
        },
    },
    "outputs": {"peek_out": {"from": "dear"}, "peek_counts": {"from": "counts"}},
}


def prices(stream: str, *values: float) -> list[dict]:
    return [
        {"time": (EPOCH + timedelta(seconds=i)).isoformat(), "symbol": stream, "price": v}
        for i, v in enumerate(values)
    ]


def setup_viewers(joe: Client) -> None:
    setup_readers(
        joe,
        "OTHER",
        [("stream", "in1", "READER", "READ_TUPLE"), ("stream", "in1", "OTHER", "READ_TUPLE")],
    )


def setup_readers(joe: Client, cys_role: str, reads: list[tuple[str, str, str, str]]) -> None:
    """al (ANALYST) may build over in1 and in2 (schema ``s``), ed (FEED) writes both, bob
    (READER) sees the schema, cy plays ``cys_role``; then ``reads`` (type, name, role,
    action) say what the readers may read and do."""
    for role in ("ANALYST", "READER", cys_role, "FEED"):
        joe.call("POST", "/roles", 201, json={"name": role})
    for user, role in (("al", "ANALYST"), ("bob", "READER"), ("cy", cys_role), ("ed", "FEED")):
        joe.call("POST", "/users", 201, json={"name": user, "password": PASSWORD, "roles": [role]})
    fields = {"time": "timestamp", "symbol": "string", "price": "double"}
    joe.call("POST", "/schemas", 201, json={"name": "s", "fields": fields, "event_time": "time"})
    grants = [("schema", "s", r, "VIEW_OBJECT") for r in ("ANALYST", "READER", "FEED")]
    grants += [("system", "system", "ANALYST", "ADD")]
    grants += [("box_type", t, "ANALYST", "USE") for t in ("union", "aggregate", "filter")]
    for stream in ("in1", "in2"):
        joe.call("POST", "/streams", 201, json={"name": stream, "schema": "s"})
        grants += [("stream", stream, "ANALYST", a) for a in ("VIEW_OBJECT", "READ_TUPLE")]
        grants += [("stream", stream, "FEED", a) for a in ("VIEW_OBJECT", "WRITE")]
    for type_, name, role, action in grants + reads:
        joe.call("PUT", f"/permissions/{type_}/{name}/{role}/{action}")
