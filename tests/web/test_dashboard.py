"""The dashboard page (issue 39): several outputs at once, each a table, a chart or a map, on
the page's one socket, saved for its user at every change and found again after a reload. A
panel whose output the user may not subscribe to says so."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.server.serverkit import wait_until
from tests.web.steps import drop_socket, open_results, reconnect

DASH = {
    "version": 1,
    "name": "dash_q",
    "inputs": {"in1": {}},
    "boxes": {
        "positions": {
            "type": "map",
            "in": "in1",
            "fields": {"time": "time", "symbol": "symbol", "lat": "price / 10", "lon": "price"},
        }
    },
    "outputs": {"dash_raw": {"from": "in1"}, "dash_pos": {"from": "positions"}},
}


def send(live, price: float) -> None:
    tuples = [{"time": "2026-01-01T00:00:01", "symbol": s, "price": price} for s in ("A", "B")]
    live.api("ed", "POST", "/streams/in1/tuples", json=tuples)


def results_at(live, price: str) -> list[dict]:
    """dash_raw's stored results of the tuples sent at ``price``."""
    tuples = live.api("al", "GET", "/outputs/dash_raw/results?from=0").json()["tuples"]
    return [t for t in tuples if str(t["price"]) == price]


def panel(page: Page, output: str):
    return page.locator(f'#page-dashboard .dash-panel[data-output="{output}"]')


def rows(page: Page, price: str):
    """The table panel's rows of the tuples sent at ``price``."""
    return panel(page, "dash_raw").locator("table.tuples tbody tr").filter(has_text=price)


def add_panel(page: Page, output: str, view: str) -> None:
    form = page.get_by_role("form", name="Add a panel")
    form.get_by_label("Output", exact=True).select_option(output)
    form.get_by_label("View", exact=True).select_option(label=view)
    form.get_by_role("button", name="Add panel").click()
    expect(panel(page, output)).to_have_attribute("data-state", "live")


def test_a_two_panel_dashboard_shows_live_rows_and_is_there_after_a_reload(login, live, stored):
    name = stored(DASH)
    live.api("al", "POST", f"/diagrams/{name}/deploy")
    page = login("al")
    try:
        page.get_by_role("link", name="Dashboard").click()
        add_panel(page, "dash_raw", "Table")
        add_panel(page, "dash_pos", "Map")
        expect(page.locator("#page-dashboard > .notice")).to_have_text("Dashboard main saved.")
        send(live, 12.5)
        expect(rows(page, "12.5")).to_have_count(2)
        expect(panel(page, "dash_pos").locator("path.ship-marker")).not_to_have_count(0)
        # the live results page on the same output shares the socket's subscription: its
        # Unsubscribe leaves the dashboard's panel subscribed
        open_results(page, "dash_raw")
        page.locator("#page-results").get_by_role("button", name="Unsubscribe").click()
        expect(page.locator("#page-results .notice")).to_have_text("Unsubscribed from dash_raw.")
        page.get_by_role("link", name="Dashboard").click()
        send(live, 12.75)
        expect(rows(page, "12.75")).to_have_count(2)
        kept = live.api("al", "GET", "/dashboards/main").json()["panels"]
        assert [(p["output"], p["view"]) for p in kept] == [
            ("dash_raw", "table"),
            ("dash_pos", "map"),
        ]

        page.reload()
        expect(page.locator("#page-dashboard")).to_be_visible()
        expect(page.locator("#page-dashboard .dash-panel")).to_have_count(2)
        for output, view in (("dash_raw", "table"), ("dash_pos", "map")):
            expect(panel(page, output)).to_have_attribute("data-state", "live")
            expect(panel(page, output).get_by_label(f"View of {output}")).to_have_value(view)
        send(live, 13.5)
        expect(rows(page, "13.5")).to_have_count(2)
        expect(panel(page, "dash_pos").locator("path.ship-marker")).not_to_have_count(0)

        # a reconnection (a network blip, a restart) loses the panel no row sent meanwhile
        drop_socket(page)
        send(live, 14.25)
        wait_until(lambda: len(results_at(live, "14.25")) == 2, 120, "the rows sent while away")
        reconnect(page)
        expect(rows(page, "14.25")).to_have_count(2)
        all_rows = panel(page, "dash_raw").locator("table.tuples tbody tr")
        expect(all_rows).to_have_count(4)  # 13.5 and 14.25 since the reload, each row once
    finally:
        live.call("al", "DELETE", "/dashboards/main")


def test_a_panel_of_an_output_the_user_may_not_subscribe_to_says_so(login, live):
    """bob may view no output: the panel his stored dashboard names tells him, and the output
    picker offers nothing."""
    panels = [{"output": "out1", "view": "chart", "options": {"field": "avg_price"}}]
    live.api("bob", "PUT", "/dashboards/main", json={"panels": panels})
    page = login("bob")
    try:
        page.get_by_role("link", name="Dashboard").click()
        refused = panel(page, "out1")
        expect(refused).to_have_attribute("data-state", "refused")
        expect(refused.locator(".notice.error")).to_have_text(
            "You may not subscribe to out1 now: no output named 'out1'"
        )
        adding = page.get_by_role("form", name="Add a panel")
        expect(adding.get_by_label("Output", exact=True).locator("option")).to_have_count(0)
        assert live.api("bob", "GET", "/dashboards/main").json()["panels"] == panels  # kept
    finally:
        live.call("bob", "DELETE", "/dashboards/main")
