"""A user changes its own password from the header, proving the current one (the console's
reset refuses one's own account: OWN_PASSWORD)."""

from __future__ import annotations

import requests
from playwright.sync_api import expect


def test_a_user_changes_its_own_password_in_the_browser(login, live):
    live.api(
        "joe",
        "POST",
        "/users",
        json={"name": "pat", "password": "first password", "roles": ["CUSTOMER1"]},
    )
    live.passwords["pat"] = "first password"
    page = login("pat")
    page.get_by_role("button", name="Change password").click()
    dialog = page.get_by_role("dialog", name="Change my password")
    dialog.get_by_label("Current password").fill("not my password")
    dialog.get_by_label("New password").fill("second password")
    dialog.get_by_role("button", name="Change").click()
    expect(dialog.locator(".notice")).to_contain_text("the current password is not right")
    dialog.get_by_label("Current password").fill("first password")
    dialog.get_by_role("button", name="Change").click()
    expect(dialog.locator(".notice")).to_contain_text("Password changed")

    def login_with(password: str) -> int:
        body = {"user": "pat", "password": password}
        return requests.post(f"{live.url}/api/v1/auth/login", json=body, timeout=30).status_code

    assert (login_with("first password"), login_with("second password")) == (401, 200)
    expect(page.locator("#whoami .user")).to_have_text("pat")  # this session goes on
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_have_count(0)
