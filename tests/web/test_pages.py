"""Smoke: every page opens for the right user, with no script error."""

from playwright.sync_api import expect

from tests.web.conftest import screenshot
from tests.web.steps import admin_tab, palette_types, watch_scripts

PAGES = {
    "Editor": "#page-editor",
    "Live results": "#page-results",
    "Dashboard": "#page-dashboard",
    "Catalog": "#page-catalog",
    "Admin": "#page-admin",
}
ADMIN_TABS = ("Users", "Roles", "Permissions", "Audit", "Settings", "Runtime")


def test_al_sees_the_editor_with_the_declared_palette(login, live):
    page = login("al")
    scripts = watch_scripts(page)
    declared = [d["type"] for d in live.api("al", "GET", "/box-types").json()["box_types"]]
    expect(page.locator(".palette-item")).to_have_count(len(declared))
    assert palette_types(page) == declared
    screenshot(page, "smoke-editor")
    assert scripts == []


def test_every_page_and_admin_tab_opens_for_an_administrator(login):
    page = login("joe")
    scripts = watch_scripts(page)
    for link, section in PAGES.items():
        page.get_by_role("link", name=link, exact=True).click()
        expect(page.locator(section)).to_be_visible()
        expect(page.get_by_role("link", name=link, exact=True)).to_have_attribute(
            "aria-current", "page"
        )
    for tab in ADMIN_TABS:
        expect(admin_tab(page, tab)).to_be_visible()
        expect(page.get_by_role("tab", name=tab)).to_have_attribute("aria-selected", "true")
        screenshot(page, f"smoke-admin-{tab.lower()}")
    assert scripts == []


def test_an_administrator_changes_a_setting_and_resets_it(login, live):
    """The settings form says which values an administrator changed and gives each back."""
    configured = live.api("joe", "GET", "/system/settings").json()["configured"][
        "login_attempts_per_minute"
    ]
    page = login("joe")
    pane = admin_tab(page, "Settings")
    attempts = pane.get_by_label("login attempts per minute", exact=True)
    reset = pane.get_by_role(
        "button", name="Reset login attempts per minute to its configured value"
    )
    expect(reset).to_be_hidden()
    attempts.fill(str(configured + 7))
    pane.get_by_role("button", name="Save settings").click()
    expect(pane.get_by_role("status")).to_have_text("Settings saved.")
    expect(
        pane.get_by_text(f"changed by an administrator; configured value {configured}")
    ).to_be_visible()
    screenshot(page, "admin-settings-changed")
    assert (
        live.api("joe", "GET", "/system/settings").json()["settings"]["login_attempts_per_minute"]
        == configured + 7
    )
    reset.click()
    expect(reset).to_be_hidden()
    expect(attempts).to_have_value(str(configured))
    assert (
        live.api("joe", "GET", "/system/settings").json()["settings"]["login_attempts_per_minute"]
        == configured
    )
