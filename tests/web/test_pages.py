"""Smoke: every page opens for the right user, with no script error."""
from playwright.sync_api import expect

from tests.web.conftest import screenshot
from tests.web.steps import palette_types


def test_al_sees_the_editor_with_the_declared_palette(login, live):
    page = login("al")
    errors = []
    page.on("pageerror", lambda error: errors.append(error))
    declared = [d["type"] for d in live.api("al", "GET", "/box-types").json()["box_types"]]
    expect(page.locator(".palette-item")).to_have_count(len(declared))
    assert palette_types(page) == declared
    screenshot(page, "smoke-editor")
    assert errors == []
