"""The backlog of a running diagram in its status (issue 39), on a live server: per input box
the rows its log holds that the query has yet to read, per output those rows, its event-time
lag and whether it falls behind (docs/editor.md, "Backlog"). The output's batch is held in its
sink (a real batch, stopped where it logs its results) while rows keep arriving, so the query
really falls behind; released, it catches up. The backlog counts tuples: shown only to who may
READ_TUPLE its sources."""

from __future__ import annotations

import jsonschema
from peekworld import setup_viewers
from serverkit import PASSWORD, Client, HeldBatches, stamped_now, wait_until
from test_box_metrics import published

LAGGED = {
    "version": 1,
    "name": "lagged",
    "inputs": {"in2": {}},
    "boxes": {"some": {"type": "filter", "in": "in2", "where": "price > 0.25"}},
    "outputs": {"lagged_out": {"from": "some"}},
}


def progress(client: Client) -> dict:
    answer = client.call("GET", "/diagrams/lagged/status")
    jsonschema.validate(answer, published(client.base))
    return answer["progress"]


def test_rows_waiting_lag_and_falling_behind(live, monkeypatch):
    batches = HeldBatches(live.app.extensions["sluice"].runtime, monkeypatch)
    joe = Client(live.url, "joe", PASSWORD)
    setup_viewers(joe)
    al = Client(live.url, "al", PASSWORD)
    al.call("POST", "/diagrams", 201, json={"document": LAGGED})
    al.call("PUT", "/permissions/diagram/lagged/READER/VIEW_OBJECT")
    al.call("POST", "/diagrams/lagged/deploy")
    ed = Client(live.url, "ed", PASSWORD)
    ed.call("POST", "/streams/in2/tuples", json=stamped_now(1))

    def caught_up() -> dict | None:
        seen = progress(al)
        out = seen["outputs"].get("lagged_out", {})
        return seen if out.get("rows") == 1 and out.get("rows_waiting") == 0 else None

    seen = wait_until(caught_up, 60, "the first tuple read and delivered")
    out = seen["outputs"]["lagged_out"]
    assert seen["backlog"] == {"in2": 0} and seen["behind"] is False and out["behind"] is False
    assert 0 <= out["event_lag_seconds"] < 120

    with batches:
        ed.call("POST", "/streams/in2/tuples", json=stamped_now(1))  # its batch is held
        ed.call("POST", "/streams/in2/tuples", json=stamped_now(3000))

        def lagging() -> dict | None:
            seen = progress(al)
            return seen if seen["behind"] else None

        seen = wait_until(lagging, 60, "the diagram falling behind")
        assert seen["backlog"] == {"in2": 3001}
        assert seen["outputs"]["lagged_out"]["rows_waiting"] == 3001
        assert seen["outputs"]["lagged_out"]["behind"] is True

        bob = Client(live.url, "bob", PASSWORD)  # may view the diagram, not READ_TUPLE in2
        hidden = progress(bob)
        assert hidden["backlog"] == {} and hidden["outputs"] == {} and hidden["behind"] is False

    def drained() -> dict | None:
        seen = progress(al)
        out = seen["outputs"]["lagged_out"]
        return seen if out["rows"] == 3002 and out["rows_waiting"] == 0 else None

    seen = wait_until(drained, 120, "the backlog read")
    assert seen["backlog"] == {"in2": 0} and seen["behind"] is False
    al.call("POST", "/diagrams/lagged/stop")
