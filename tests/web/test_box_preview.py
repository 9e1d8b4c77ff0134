"""The editor's data preview (issue 19) in Chromium: selecting a box of a running diagram and
pressing Preview data shows the box's newest results as the server filters them for this user;
a hostile value is shown as text, and every field of a result shows in the narrow panel."""

from __future__ import annotations

import datetime as dt

from playwright.sync_api import expect

from tests.web.conftest import screenshot
from tests.web.steps import HOSTILE, box, watch_scripts
from tests.web.test_editor import filtered, open_diagram


def test_a_box_of_a_running_diagram_previews_its_newest_results(login, live, stored):
    name = stored(filtered("peeked", "price > 500"))
    live.api("al", "POST", f"/diagrams/{name}/deploy")
    stamp = dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc).isoformat()
    tuples = [
        {"time": stamp, "symbol": HOSTILE, "price": 777.0},
        {"time": stamp, "symbol": "cheap_one", "price": 1.0},
    ]
    live.api("ed", "POST", "/streams/in1/tuples", json=tuples)

    page = login("al")
    scripts = watch_scripts(page)
    open_diagram(page, name)
    box(page, "cheap").click()
    panel = page.get_by_role("region", name="Data preview of cheap")
    panel.get_by_role("button", name="Preview data").click()
    rows = panel.locator("table.record")  # one small table per result, a row per field
    # other tests' tuples may be in the preview too; this test's row is the hostile one at 777
    expect(rows.filter(has_text=HOSTILE).filter(has_text="777")).to_have_count(1)
    expect(rows.filter(has_text=HOSTILE)).to_have_count(1)  # shown as text, never as markup
    answer = live.api("al", "GET", f"/diagrams/{name}/boxes/cheap/preview").json()
    # the box's fields, in order
    expect(rows.first.locator("th")).to_have_text(answer["fields"])
    expect(rows.filter(has_text="cheap_one")).to_have_count(0)  # the filter's own work
    # every field shows in the narrow panel: nothing cut off to the right (issue 39)
    result = panel.locator(".preview-result")
    assert result.evaluate("e => e.scrollWidth <= e.clientWidth")
    screenshot(page, "preview")
    assert scripts == []

    # an edited canvas is not what runs: saving and deploying comes first
    page.get_by_label("where (required)").fill("price > 600")
    panel.get_by_role("button", name="Preview data").click()
    expect(panel).to_contain_text("Save and deploy the diagram to preview this box's data.")
    expect(rows).to_have_count(0)
