"""Lists redrawn on every catalog change keep the rows that did not change as the same nodes:
a click whose press and release straddle a redraw would otherwise be lost (CI once saw a
diagram's name clicked with nothing opening)."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.test_editor import filtered


def connected(handle) -> bool:
    return handle.evaluate("node => node.isConnected")


def test_a_catalog_change_keeps_the_rows_that_did_not_change(login, live, stored):
    first = stored(filtered("kept_first", "price > 1"))
    page = login("al")
    row = page.locator(f'.diagram-list li[data-diagram="{first}"]')
    expect(row).to_be_visible()
    diagram_row = row.element_handle()
    page.get_by_role("link", name="Catalog").click()
    object_row = page.locator(f'#page-catalog tr[data-object="diagram/{first}"]').element_handle()

    second = stored(filtered("kept_second", "price > 2"))  # a catalog_changed event to each page
    expect(page.locator(f'#page-catalog tr[data-object="diagram/{second}"]')).to_be_visible()
    assert connected(object_row)
    page.get_by_role("link", name="Editor").click()
    expect(page.locator(f'.diagram-list li[data-diagram="{second}"]')).to_be_visible()
    assert connected(diagram_row)

    live.api("al", "POST", f"/diagrams/{first}/deploy")  # a changed row is drawn afresh
    expect(row.locator(".status")).to_have_text("running")
    assert not connected(diagram_row)
