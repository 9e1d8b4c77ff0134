"""Two versions of a diagram compared beside the editor's version list, and the older one
restored from there (issue 39): the change shows both definitions, Restore stores the old
document as the newest version and opens it."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.steps import confirm, editor_notice, watch_scripts
from tests.web.test_editor import filtered, open_diagram, where_of


def test_two_versions_compare_and_the_older_is_restored(login, live):
    name = "compared"
    live.api("al", "POST", "/diagrams", json={"document": filtered(name, "price > 1")})
    live.api("al", "PUT", f"/diagrams/{name}", json={"document": filtered(name, "price > 2")})
    try:
        page = login("al")
        scripts = watch_scripts(page)
        open_diagram(page, name)
        versions = page.locator(".version-list li")
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
    finally:
        live.call("al", "DELETE", f"/diagrams/{name}")
