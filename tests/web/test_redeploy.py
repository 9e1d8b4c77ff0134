"""Editing a running diagram in the browser and saving it swaps the edit in (issue 39, Node-RED's
Deploy): an edit after the window keeps the window's state and every result position, so a
count after the swap includes tuples sent before it and a subscriber gets each result exactly
once; an edit of the window itself starts it afresh, the page says which state went, and the
results page, reconnecting with a position of the old result log that the new one has passed,
reads the new one whole."""

from __future__ import annotations

import datetime as dt

from playwright.sync_api import expect

from tests.server.serverkit import Client, wait_until
from tests.web.steps import drop_socket, editor_notice, open_results, reconnect, set_field
from tests.web.test_editor import open_diagram, toolbar

NAME = "redeployed"
OUTPUT = f"{NAME}_out"
START = dt.datetime(2032, 1, 1, tzinfo=dt.timezone.utc)  # after other tests' data


def counted() -> dict:
    """in1 -> per symbol, the count and sum of its last three prices -> a filter -> output."""
    return {
        "version": 1,
        "name": NAME,
        "inputs": {"in1": {}},
        "boxes": {
            "n": {
                "type": "aggregate",
                "in": "in1",
                "window": {"rows": 3},
                "group_by": ["symbol"],
                "aggregates": {"c": "count()", "total": "sum(price)"},
            },
            "shown": {"type": "filter", "in": "n", "where": "c > 0"},
        },
        "outputs": {OUTPUT: {"from": "shown"}},
    }


class Feed:
    """Ed's tuples on in1, a second apart."""

    def __init__(self, live) -> None:
        self.live, self.sent = live, 0

    def send(self, *rows: tuple[str, float]) -> None:
        tuples = []
        for symbol, price in rows:
            at = START + dt.timedelta(seconds=self.sent)
            tuples.append({"time": at.isoformat(), "symbol": symbol, "price": price})
            self.sent += 1
        self.live.api("ed", "POST", "/streams/in1/tuples", json=tuples)


class Subscriber:
    """Al on a socket.io connection of his own, subscribed to the output: every ``tuples``
    event as (its ``next`` position, its rows)."""

    def __init__(self, live) -> None:
        self.client = Client(live.url, "al", live.passwords["al"])
        self.events: list[tuple[int, list[dict]]] = []
        self.client.connect()
        self.client.sock.on("tuples", self._tuples)
        assert self.client.emit("subscribe", {"output": OUTPUT}) == {"subscribed": OUTPUT}

    def _tuples(self, data) -> None:
        self.events.append((data["next"], data["tuples"]))

    def rows(self) -> list[tuple[str, int, float]]:
        return [(t["symbol"], t["c"], t["total"]) for _, tuples in self.events for t in tuples]

    def wait_for(self, count: int, what: str) -> None:
        wait_until(lambda: len(self.rows()) >= count, 120, what)

    def positions_are_contiguous(self) -> bool:
        """Each event starts where the one before it ended, the first at the log's start."""
        at = 0
        for next_, tuples in self.events:
            if next_ - len(tuples) != at:
                return False
            at = next_
        return True


def logged(live) -> list[tuple[str, int, float]]:
    """The output's result log, from its start."""
    tuples = live.api("al", "GET", f"/outputs/{OUTPUT}/results?from=0&limit=1000").json()["tuples"]
    return [(t["symbol"], t["c"], t["total"]) for t in tuples]


def test_an_edit_after_the_window_keeps_its_state_and_every_result(login, live, stored):
    stored(counted())
    live.api("al", "POST", f"/diagrams/{NAME}/deploy")
    subscriber = Subscriber(live)
    results = login("al")
    open_results(results, OUTPUT)
    editor = login("al")
    open_diagram(editor, NAME)
    feed = Feed(live)
    try:
        feed.send(("K", 1.0), ("K", 2.0))
        subscriber.wait_for(2, "the window's first counts")
        expect(results.locator("#page-results .counter")).to_have_text("2 tuples")

        # an edit after the window, through the editor; Save swaps it in while it runs
        set_field(editor, "shown", "where (required)", "total > 2")
        toolbar(editor, "Save").click()
        expect(editor_notice(editor)).to_have_text(
            f"Updated {NAME}. Swapped while running: {OUTPUT} kept its state and missed no result."
        )
        # L's one row is dropped by the new filter; K's count of 3 and sum of 7 are reached
        # only with the two prices the window held across the swap
        feed.send(("L", 1.0), ("K", 4.0))
        subscriber.wait_for(3, "a count after the swap")
        assert subscriber.rows() == [("K", 1, 1.0), ("K", 2, 3.0), ("K", 3, 7.0)]
        assert subscriber.positions_are_contiguous(), subscriber.events
        assert logged(live) == subscriber.rows()  # each result once, in the log's order
        expect(results.locator("#page-results .counter")).to_have_text("3 tuples")
        expect(results.locator("table.tuples tbody tr").first).to_contain_text("7")

        # an edit of the window itself, with the results page away: its state goes, and the
        # page says so
        drop_socket(results)
        set_field(editor, "n", "rows", "2")
        toolbar(editor, "Save").click()
        expect(editor_notice(editor)).to_have_text(
            f"Updated {NAME}. Swapped while running: {OUTPUT} starts afresh from the newest "
            "input: the state of n (windows, groups, join buffers) is dropped."
        )
        # the new result log passes the page's position of the old one (3) while it is away
        feed.send(("K", 8.0), ("K", 9.0), ("K", 10.0))
        subscriber.wait_for(6, "counts after the window changed")
        assert subscriber.rows()[3:] == [("K", 1, 8.0), ("K", 2, 17.0), ("K", 2, 19.0)]
        # the page, reconnecting with that position and its log (refused: RESULTS_RESTARTED),
        # reads the new log from its start, not from 3
        reconnect(results)
        expect(results.locator("#page-results .notice")).to_have_text(
            f"Reconnected to {OUTPUT}, which was redeployed afresh meanwhile: its results start "
            "again, all shown."
        )
        expect(results.locator("#page-results .counter")).to_have_text("6 tuples")  # each once
        expect(results.locator("table.tuples tbody tr").first).to_contain_text("19")
    finally:
        subscriber.client.close()
