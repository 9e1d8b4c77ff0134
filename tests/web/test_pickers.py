"""Field pickers and completion (issue 39): a filter's where, a map's fields and an aggregate's
group_by and aggregates offer the fields that reach the box, as the server computes them (a
map's new fields downstream of it included), and the allow-listed functions; typing offers the
names that start with the word being typed."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.web.steps import arrow, box, set_field
from tests.web.test_editor import filtered, open_diagram


def form_field(page: Page, label: str):
    return page.locator(".properties").get_by_label(label, exact=True)


def picker(page: Page, path: str):
    return page.locator(f'.properties [data-path="{path}"] select.picker')


def offered(page: Page, path: str) -> list[str]:
    return picker(page, path).locator("option").evaluate_all("os => os.map(o => o.value)")


def test_a_filter_completes_fields_and_allow_listed_functions(login, stored):
    name = stored(filtered("picked"))
    page = login("al")
    open_diagram(page, name)
    box(page, "cheap").click()
    where = form_field(page, "where (required)")
    expect(picker(page, "where").locator("option", has_text="price (double)")).to_have_count(1)
    values = offered(page, "where")
    assert {"price", "symbol", "time", "abs(", "round(", "distance_km("} <= set(values)
    assert "avg(" not in values  # an aggregate is no scalar function

    where.fill("")
    where.press_sequentially("abs(pr")
    page.locator(".properties .suggestion", has_text="price").click()
    expect(where).to_have_value("abs(price")
    where.press_sequentially(") > ")
    picker(page, "where").select_option("round(")
    expect(where).to_have_value("abs(price) > round(")


def test_group_by_and_aggregates_pick_the_fields_a_map_makes(login):
    page = login("al")
    page.locator('.palette-item[data-type="input"]').click()
    page.locator('.palette-item[data-type="map"]').click()
    page.locator('.palette-item[data-type="aggregate"]').click()
    arrow(page, "in1", "map1")
    arrow(page, "map1", "aggregate1")
    set_field(page, "map1", "fields (required)", "time: time\ncents: price * 100\nticker: symbol")
    box(page, "aggregate1").click()
    group_by = form_field(page, "group_by")
    expect(picker(page, "group_by").locator("option", has_text="ticker (string)")).to_have_count(1)
    assert offered(page, "group_by") == ["", "cents", "ticker", "time"]  # fields only
    picker(page, "group_by").select_option("ticker")
    picker(page, "group_by").select_option("cents")
    expect(group_by).to_have_value("ticker, cents")
    assert {"avg(", "count(", "cents"} <= set(offered(page, "aggregates"))
