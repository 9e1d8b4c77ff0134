"""A count window written in CQL, end to end on a live server (real Spark, HTTP, socket.io): the
diagram is created from CQL, deployed, and its results, over tuples sent in several requests
(so several micro-batches, the window carried over in Spark's state), equal CQL's count-window
semantics computed here in plain Python."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from serverkit import PASSWORD, Client, wait_until

EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)
N = 3
CQL = f"""CREATE DIAGRAM ticks;
INSERT INTO last3
SELECT symbol, count(*) AS n, sum(price) AS total
FROM quotes [PARTITION BY symbol ROWS {N}]
WHERE price > 0
GROUP BY symbol"""
# (second, symbol, price), sent in three requests; one price enters A's window and is not counted.
SENDS = [
    [(1, "A", 10), (2, "B", 1), (3, "A", 20)],
    [(4, "A", -5), (5, "A", 30), (6, "B", 2)],
    [(7, "A", 40), (8, "B", 3), (9, "B", 4)],
]


def reference() -> list[tuple[str, int, int]]:
    """Per symbol, after each tuple that enters: the count and sum of the tuples among its
    last N that satisfy WHERE (CQL: the window, then WHERE), when there is one."""
    windows: dict[str, list[int]] = {}
    out = []
    for _, symbol, price in (t for batch in SENDS for t in batch):
        window = (windows.setdefault(symbol, []) + [price])[-N:]
        windows[symbol] = window
        kept = [p for p in window if p > 0]
        if kept:
            out.append((symbol, len(kept), sum(kept)))
    return out


def test_a_cql_count_window_delivers_cqls_results_across_micro_batches(live):
    joe = Client(live.url, "joe", PASSWORD)
    fields = {"t": "timestamp", "symbol": "string", "price": "long"}
    joe.call("POST", "/schemas", 201, json={"name": "q", "fields": fields, "event_time": "t"})
    joe.call("POST", "/streams", 201, json={"name": "quotes", "schema": "q"})
    made = joe.call("POST", "/diagrams", 201, json={"cql": CQL})
    assert made["document"]["boxes"]["last3_agg"]["window"] == {"rows": N}
    joe.call("POST", "/diagrams/ticks/deploy")
    joe.connect()
    assert joe.emit("subscribe", {"output": "last3"}) == {"subscribed": "last3"}
    want = reference()
    sent = 0
    for batch in SENDS:
        rows = [
            {"t": (EPOCH + timedelta(seconds=s)).isoformat(), "symbol": sym, "price": p}
            for s, sym, p in batch
        ]
        joe.call("POST", "/streams/quotes/tuples", json=rows)
        sent += len(batch)
        wait_until(lambda n=sent: len(joe.received) >= n, 120, f"{sent} results")
    got = [(t["symbol"], t["n"], t["total"]) for t in joe.received]
    per_symbol = {s: [r for r in got if r[0] == s] for s in "AB"}
    assert per_symbol == {s: [r for r in want if r[0] == s] for s in "AB"}
    assert all(t["_sources"] == ["quotes"] for t in joe.received)
    joe.close()
