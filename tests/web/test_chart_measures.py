"""Charts draw measures, not identifiers (issue 39): a ship's mmsi (about 563 million) beside
its latitude flattened the latitude to a line, and a patient's number drew a sawtooth. The live
chart's fields, by default, are the output's measures, and an identifier is what it draws one
line per (web/js/measures.js)."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.steps import open_results

SHIPS = {
    "version": 1,
    "name": "ships",
    "inputs": {"in1": {}},
    "boxes": {
        "positions": {
            "type": "map",
            "in": "in1",
            "fields": {
                "time": "time",
                "mmsi": "floor(price) + 563000000",
                "lat": "price / 100",
                "speed": "price",
            },
        }
    },
    "outputs": {"ships_out": {"from": "positions"}},
}


def test_the_live_chart_draws_measures_one_line_per_identifier(login, live, stored):
    name = stored(SHIPS)
    live.api("al", "POST", f"/diagrams/{name}/deploy")
    page = login("al")
    open_results(page, "ships_out")
    pane = page.locator("#page-results .results-chart")
    field = pane.get_by_label("Field", exact=True)
    split = pane.get_by_label("One line per", exact=True)
    expect(field).to_have_value("lat")
    expect(split).to_have_value("mmsi")
    offered = field.locator("option").evaluate_all("options => options.map(o => o.value)")
    assert offered == ["", "lat", "speed"]  # "all measures", never the mmsi
