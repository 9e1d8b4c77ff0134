"""The editor offers only what the session may do (issue 39): without ADD on the system a
user cannot save a diagram, so the palette, Save and Deploy (which saves first) are disabled
and say why; a user with ADD gets them enabled. The page asks GET /auth/capabilities."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.steps import editor_notice

REASON = "needs ADD on the system"


def test_bob_without_add_sees_the_palette_and_save_disabled_with_the_reason(login):
    page = login("bob")
    item = page.locator('.palette-item[data-type="filter"]')
    expect(item).to_be_disabled()
    expect(item).to_have_attribute("title", f"Saving a diagram {REASON}")
    expect(page.locator(".palette-note")).to_contain_text(REASON)
    save = page.locator('.toolbar [data-action="save"]')
    expect(save).to_be_disabled()
    expect(save).to_have_attribute("title", f"Saving a diagram {REASON}")
    page.get_by_role("button", name="Validate").click()  # an action's end enables the others
    expect(editor_notice(page)).not_to_be_empty()
    expect(save).to_be_disabled()
    expect(page.locator('.toolbar [data-action="deploy"]')).to_be_disabled()
    page.keyboard.press("Control+s")  # the shortcut says why instead of trying
    expect(editor_notice(page)).to_contain_text(REASON)


def test_al_with_add_sees_the_palette_and_save_enabled(login):
    page = login("al")
    expect(page.locator('.palette-item[data-type="filter"]')).to_be_enabled()
    expect(page.locator(".palette-note")).to_have_count(0)
    expect(page.locator('.toolbar [data-action="save"]')).to_be_enabled()
    expect(page.locator('.toolbar [data-action="deploy"]')).to_be_enabled()
