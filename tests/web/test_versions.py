"""A diagram's versions in the editor (issue 19's version history): every save is listed, an
older version opens on the canvas, and saving it restores it as the newest version."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.steps import box, editor_notice, watch_scripts
from tests.web.test_editor import filtered, open_diagram, toolbar, where_of


def test_an_older_version_opens_and_saving_it_restores_it(login, live):
    name = "versioned"
    live.api("al", "POST", "/diagrams", json={"document": filtered(name, "price > 1")})
    live.api("al", "PUT", f"/diagrams/{name}", json={"document": filtered(name, "price > 2")})
    try:
        page = login("al")
        scripts = watch_scripts(page)
        open_diagram(page, name)
        versions = page.locator(".version-list li")
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
    finally:
        live.call("al", "DELETE", f"/diagrams/{name}")
