"""The live results page loses no row across a reconnection (issue 20): it subscribes again
from the last position it saw, and the server sends what the output produced meanwhile."""

import datetime as dt

from playwright.sync_api import expect

from tests.paper import q1
from tests.server.serverkit import wait_until
from tests.web.steps import Feed, drop_socket, open_results, reconnect, result_rows


def test_the_results_page_catches_up_after_a_reconnection(login, live):
    doc = q1(outputs={})
    doc["name"], doc["outputs"] = "qresume", {"out_resume": {"from": "avg"}}
    live.api("al", "POST", "/diagrams", json={"document": doc})
    live.api("al", "POST", "/diagrams/qresume/deploy")
    try:
        al = login("al")
        open_results(al, "out_resume")
        feed = Feed(live)
        feed.START = dt.datetime(2031, 1, 1, tzinfo=dt.timezone.utc)  # after other tests' data
        first = feed.tick()
        feed.tick()  # closes the first window
        expect(result_rows(al, first)).to_have_count(4)

        drop_socket(al)
        while_away = feed.tick()  # closes the second window, produced while the page is away
        feed.tick()

        def produced() -> list[dict]:
            return live.api("al", "GET", "/outputs/out_resume/results?from=0").json()["tuples"]

        wait_until(
            lambda: len([t for t in produced() if t["window_start"].startswith(while_away)]) == 4,
            120,
            "the window produced while the page was away",
        )

        reconnect(al)
        expect(al.locator("#page-results .notice")).to_contain_text("nothing was missed")
        expect(result_rows(al, while_away)).to_have_count(4)
        expect(result_rows(al)).to_have_count(len(produced()))  # each row once
    finally:
        live.api("al", "POST", "/diagrams/qresume/stop")
        live.api("al", "DELETE", "/diagrams/qresume")
