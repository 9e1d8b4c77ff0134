"""Hostile text stays text. Catalog names cannot hold ``<`` (the server refuses them), so the
payload travels every other way a user's text reaches a page: a box and a diagram name typed
into the editor, the server's messages that quote them, a tuple's values in the results table,
role and user names quoted back by the catalog browser and the admin console, and a failed
login's attempted name in the audit log. No dialog may open, no element may be injected, and
the payload must show literally wherever it lands."""

import pytest
import requests
from playwright.sync_api import Page, expect

from tests.web.conftest import screenshot
from tests.web.steps import (
    HOSTILE,
    admin_tab,
    box,
    catalog_object,
    open_results,
    rename,
    watch_scripts,
)

QUOTED = f"'{HOSTILE}'"
ECHO = {
    "version": 1,
    "name": "echo",
    "inputs": {"hostile_in": {}},
    "outputs": {"hostile_out": {"from": "hostile_in"}},
}


def assert_nothing_injected(page: Page, scripts: list[str]) -> None:
    assert page.locator("img, [onerror]").count() == 0
    assert scripts == []


def try_grant(pane, role: str) -> None:
    form = pane.get_by_role("form", name="Grant a permission")
    form.get_by_label("Role").fill(role)
    form.get_by_role("button", name="Grant").click()


@pytest.fixture
def echo(live):
    """Joe's stream and a running diagram whose output carries it as it comes."""
    live.api("joe", "POST", "/streams", json={"name": "hostile_in", "schema": "s"})
    live.api("joe", "POST", "/diagrams", json={"document": ECHO})
    live.api("joe", "POST", "/diagrams/echo/deploy")
    yield
    live.api("joe", "POST", "/diagrams/echo/stop")


def test_hostile_text_stays_text_on_every_page(login, live, echo):
    # someone tries to log in with the payload as their name: the audit log keeps the attempt
    requests.post(
        f"{live.url}/api/v1/auth/login", json={"user": HOSTILE, "password": "x"}, timeout=30
    )

    page = login("joe")
    scripts = watch_scripts(page)

    # Editor: a box and the diagram named with the payload, and the server's problems quoting them.
    page.get_by_role("button", name="New", exact=True).click()
    page.locator('.palette-item[data-type="filter"]').click()
    rename(page, "filter1", HOSTILE)
    expect(box(page, HOSTILE).locator(".box-name")).to_have_text(HOSTILE)
    page.get_by_label("Diagram name").fill(HOSTILE)
    page.get_by_role("button", name="Validate", exact=True).click()
    problems = page.locator(".problems li")
    expect(
        problems.filter(has_text=f"boxes.{HOSTILE}: {QUOTED} is not a valid name")
    ).to_have_count(1)
    expect(problems.filter(has_text=f"name: {QUOTED} is not a valid name")).to_have_count(1)
    expect(box(page, HOSTILE).locator(".box-fault")).to_contain_text(QUOTED)  # on the box too
    expect(page.locator("#page-editor .toolbar .field-error")).to_contain_text(QUOTED)
    expect(page.locator(".properties .field-error").first).to_contain_text(QUOTED)
    assert_nothing_injected(page, scripts)

    # Live results: a tuple whose symbol is the payload.
    open_results(page, "hostile_out")
    live.api(
        "joe",
        "POST",
        "/streams/hostile_in/tuples",
        json=[{"time": "2026-01-01T00:00:01+00:00", "symbol": HOSTILE, "price": 1.0}],
    )
    expect(
        page.locator("table.tuples").get_by_role("cell", name=HOSTILE, exact=True)
    ).to_have_count(1)
    assert_nothing_injected(page, scripts)

    # Catalog browser: a grant to a role named with the payload is refused, quoting it.
    detail = catalog_object(page, "stream", "hostile_in")
    try_grant(detail, HOSTILE)
    expect(detail.get_by_role("status")).to_have_text(f"no role named {QUOTED}")
    assert_nothing_injected(page, scripts)

    # Admin console: a user, a role and a grant named with the payload; the audit log.
    users = admin_tab(page, "Users")
    form = users.get_by_role("form", name="Create a user")
    form.get_by_label("Name").fill(HOSTILE)
    form.get_by_label("Password").fill("a long password")
    form.get_by_role("button", name="Create user").click()
    expect(users.get_by_role("status")).to_contain_text(f"user name {QUOTED} must start")
    roles = admin_tab(page, "Roles")
    roles.get_by_label("New role").fill(HOSTILE)
    roles.get_by_role("button", name="Add role").click()
    expect(roles.get_by_role("status")).to_contain_text(f"role name {QUOTED} must start")
    permissions = admin_tab(page, "Permissions")
    try_grant(permissions, HOSTILE)
    expect(permissions.get_by_role("status")).to_have_text(f"no role named {QUOTED}")
    audit = admin_tab(page, "Audit")
    audit.get_by_label("Event").fill("login_failed")
    audit.get_by_role("button", name="Filter").click()
    attempts = audit.locator("table.audit td.details").filter(has_text=f"attempted {HOSTILE}")
    expect(attempts).not_to_have_count(0)
    screenshot(page, "xss-audit")
    assert_nothing_injected(page, scripts)
