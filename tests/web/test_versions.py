"""A diagram's versions in the editor (issue 19's version history; issue 39's compare): every
save is listed, an older version opens on the canvas and saving it restores it as the newest
version; two versions compare beside the list, and Restore stores the older document as the
newest version and opens it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.web.steps import box, confirm, editor_notice, watch_scripts
from tests.web.test_editor import filtered, open_diagram, toolbar, where_of


@pytest.fixture
def two_versions(login, live):
    """``open_(name)``: al's diagram ``name`` stored twice (where price > 1, then > 2) and open
    in al's editor; ``(page, the page's script errors, the version list)``. Deleted after."""
    made = []

    def open_(name: str):
        live.api("al", "POST", "/diagrams", json={"document": filtered(name, "price > 1")})
        made.append(name)
        live.api("al", "PUT", f"/diagrams/{name}", json={"document": filtered(name, "price > 2")})
        page = login("al")
        scripts = watch_scripts(page)
        open_diagram(page, name)
        return page, scripts, page.locator(".version-list li")

    yield open_
    for name in made:
        live.call("al", "DELETE", f"/diagrams/{name}")


def test_an_older_version_opens_and_saving_it_restores_it(two_versions, live):
    name = "versioned"
    page, scripts, versions = two_versions(name)
    expect(page.get_by_role("heading", name=f"Versions of {name}")).to_be_visible()
    expect(versions).to_have_count(2)
    expect(versions.nth(0)).to_contain_text("v2")
    expect(versions.nth(0)).to_contain_text("(stored now)")
    expect(versions.nth(1)).to_contain_text("by al")

    versions.nth(1).get_by_role("button", name="v1").click()
    expect(editor_notice(page)).to_contain_text(f"Opened version 1 of {name}")
    box(page, "cheap").click()
    where = page.locator(".properties").get_by_label("where (required)", exact=True)
    expect(where).to_have_value("price > 1")
    assert where_of(live, name) == "price > 2"  # nothing stored until Save

    toolbar(page, "Save").click()
    expect(editor_notice(page)).to_have_text(f"Updated {name}.")
    assert where_of(live, name) == "price > 1"
    expect(versions).to_have_count(3)
    expect(versions.nth(0)).to_contain_text("v3")
    listed = live.api("al", "GET", f"/diagrams/{name}/versions").json()["versions"]
    assert [v["version"] for v in listed] == [3, 2, 1]

    toolbar(page, "New").click()
    expect(page.locator(".versions")).to_be_hidden()
    assert scripts == []


def test_two_versions_compare_and_the_older_is_restored(two_versions, live):
    name = "compared"
    page, scripts, versions = two_versions(name)
    expect(versions).to_have_count(2)
    versions.nth(1).get_by_role("button", name="compare").click()
    panel = page.locator(".version-compare")
    expect(panel.get_by_role("heading", name=f"v1 → v2 of {name}")).to_be_visible()
    expect(panel.locator('[data-kind="changed"] li')).to_have_count(1)
    expect(panel.get_by_label("cheap in v1")).to_contain_text('"price > 1"')
    expect(panel.get_by_label("cheap in v2")).to_contain_text('"price > 2"')

    panel.get_by_role("button", name="Restore v1").click()
    confirm(page, "Restore")
    expect(editor_notice(page)).to_contain_text(f"Restored v1 of {name}.")
    assert where_of(live, name) == "price > 1"
    expect(versions).to_have_count(3)
    expect(panel).to_be_hidden()
    assert scripts == []
