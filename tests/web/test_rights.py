"""A user whose only role holds no grant: nothing of anyone else's shows anywhere in the page,
the admin console is neither offered nor reachable, and the palette is what the server declares."""

import re

import pytest
from playwright.sync_api import expect

from tests.web.steps import admin_tab, palette_types, watch_scripts

PASSWORD = "a long password for nobody"
# Al's own diagram, saved but not running: it must stay his.
PRIVATE = {
    "version": 1,
    "name": "al_private",
    "inputs": {"in1": {}},
    "outputs": {"al_private_out": {"from": "in1"}},
}


@pytest.fixture
def private_diagram(live):
    live.api("al", "POST", "/diagrams", json={"document": PRIVATE})
    yield
    live.api("al", "DELETE", "/diagrams/al_private")


def test_a_user_without_rights_sees_nothing_of_others(login, live, private_diagram):
    # Joe makes the role and the user in the admin console.
    joe = login("joe")
    roles = admin_tab(joe, "Roles")
    roles.get_by_label("New role").fill("VISITOR")
    roles.get_by_role("button", name="Add role").click()
    expect(roles.get_by_role("status")).to_have_text("Added role VISITOR.")
    users = admin_tab(joe, "Users")
    form = users.get_by_role("form", name="Create a user")
    form.get_by_label("Name").fill("nobody")
    form.get_by_label("Password").fill(PASSWORD)
    form.get_by_label("VISITOR").check()
    form.get_by_role("button", name="Create user").click()
    expect(users.get_by_role("status")).to_have_text("Created nobody.")
    live.passwords["nobody"] = PASSWORD

    # Every name of a stream, output or diagram in the catalog (joe, an administrator, sees all).
    others = {
        o["name"]
        for o in live.api("joe", "GET", "/catalog").json()["objects"]
        if o["type"] in ("stream", "output", "diagram")
    }
    assert {"in1", "in2", "al_private", "al_private_out"} <= others
    leak = re.compile(r"\b(" + "|".join(map(re.escape, sorted(others))) + r")\b")

    page = login("nobody")
    scripts = watch_scripts(page)
    declared = [d["type"] for d in live.api("nobody", "GET", "/box-types").json()["box_types"]]
    expect(page.locator(".palette-item")).to_have_count(len(declared))
    assert palette_types(page) == declared
    expect(page.locator(".diagram-list")).to_have_text("No diagrams yet.")
    # nobody may not create a diagram (ADD): the palette is shown disabled, with the reason
    expect(page.locator('.palette-item[data-type="input"]')).to_be_disabled()
    expect(page.locator(".palette-note")).to_contain_text("needs ADD on the system")
    expect(page.locator(".drawflow-node")).to_have_count(0)
    assert not leak.search(page.content())

    page.get_by_role("link", name="Catalog").click()
    expect(page.locator("table.objects tbody tr")).to_have_count(0)
    assert not leak.search(page.content())

    page.get_by_role("link", name="Live results").click()
    results = page.locator("#page-results")
    expect(results.get_by_label("Output", exact=True).locator("option")).to_have_count(0)
    expect(results.get_by_role("status")).to_have_text("There is no output you may view yet.")
    assert not leak.search(page.content())

    # No Admin link, and the address of the console shows the editor, with no console drawn.
    expect(page.locator("#nav a")).to_have_text(
        ["Editor", "Live results", "Dashboard", "Catalog", "Streams"]
    )
    page.evaluate("location.hash = '#admin'")
    expect(page.locator("#page-editor")).to_be_visible()
    expect(page.locator("#page-admin")).to_be_hidden()
    expect(page.locator("#page-admin")).to_be_empty()
    for path in ("/users", "/roles", "/permissions", "/audit", "/system/settings"):
        assert live.call("nobody", "GET", path).status_code == 403, path
    assert scripts == []
