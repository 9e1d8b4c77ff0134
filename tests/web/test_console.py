"""The admin console and the Streams page in Chromium (issue 39): no role is preset and giving an
administering role or disabling a user asks first; a login and a look round leave no denial in
the audit log (the pages ask the session's capabilities instead of trying routes); the audit
log pages back, filters by time and shows each entry's details whole; streams and schemas are
deleted from the page, refused while in use with what uses them named; a bad CSV file's
problems are reported once."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.web.steps import admin_tab, confirm

PASSWORD = "a long password for carol"
PAGE = 50  # entries a page of the audit tab shows (web/js/audit.js)


def denials(live, user: str) -> list[int]:
    entries = live.api("joe", "GET", f"/audit?user={user}&allowed=false&limit=500").json()
    return [e["id"] for e in entries["entries"]]


def user_row(page: Page, name: str):
    return admin_tab(page, "Users").locator(f'tr[data-user="{name}"]')


def roles_of(live, name: str) -> list[str]:
    users = live.api("joe", "GET", "/users").json()["users"]
    return next(u for u in users if u["name"] == name)["roles"]


def test_no_role_is_preset_and_power_or_a_lockout_asks_first(login, live):
    live.api("joe", "POST", "/users", json={"name": "carol", "password": PASSWORD, "roles": []})
    try:
        page = login("joe")
        row = user_row(page, "carol")
        pick, give = (
            row.get_by_label("Role to give carol"),
            row.get_by_role("button", name="Add role"),
        )
        expect(pick).to_have_value("")
        expect(give).to_be_disabled()

        pick.select_option("ADMIN")
        give.click()
        expect(page.get_by_role("alertdialog")).to_contain_text("It administers the system")
        confirm(page, "Cancel")
        assert roles_of(live, "carol") == []
        give.click()
        confirm(page, "Give ADMIN")
        expect(row.locator(".chip")).to_have_text(["ADMIN×"])
        assert roles_of(live, "carol") == ["ADMIN"]

        pick.select_option("CUSTOMER1")  # a role that administers nothing is given at once
        give.click()
        expect(row.locator(".chip")).to_have_text(["ADMIN×", "CUSTOMER1×"])
        expect(page.get_by_role("alertdialog")).to_have_count(0)

        row.get_by_role("button", name="Disable").click()
        expect(page.get_by_role("alertdialog")).to_contain_text("Disable carol?")
        confirm(page, "Cancel")
        expect(row).to_contain_text("enabled")
        row.get_by_role("button", name="Disable").click()
        confirm(page, "Disable")
        expect(row).to_contain_text("disabled")
        row.get_by_role("button", name="Enable").click()  # giving access back asks nothing
        expect(row).to_contain_text("enabled")
        expect(page.get_by_role("alertdialog")).to_have_count(0)

        form = admin_tab(page, "Users").get_by_role("form", name="Create a user")
        form.get_by_label("Name").fill("dave")
        form.get_by_label("Password").fill(PASSWORD)
        form.get_by_label("ADMIN").check()
        form.get_by_role("button", name="Create user").click()
        expect(page.get_by_role("alertdialog")).to_contain_text("Give dave ADMIN?")
        confirm(page, "Cancel")
        assert "dave" not in {u["name"] for u in live.api("joe", "GET", "/users").json()["users"]}
    finally:
        live.api("joe", "DELETE", "/users/carol")


def test_logging_in_and_looking_round_leaves_no_denial(login, live):
    before = {user: denials(live, user) for user in ("al", "bob")}
    for user in ("bob", "al"):
        page = login(user)
        expect(page.locator("#nav a")).to_have_text(
            ["Editor", "Live results", "Dashboard", "Catalog", "Streams"]
        )
        for link in ("Live results", "Dashboard", "Catalog", "Streams", "Editor"):
            page.get_by_role("link", name=link).click()
            expect(page.get_by_role("link", name=link)).to_have_attribute("aria-current", "page")
    assert {user: denials(live, user) for user in ("al", "bob")} == before
    # al opens a stream he may read but not administer: told so, without trying
    page.get_by_role("link", name="Catalog").click()
    page.locator('tr[data-object="stream/in1"]').get_by_role("button", name="in1").click()
    expect(page.locator("#page-catalog .detail")).to_contain_text(
        "Only this object's owner, holders of CHANGE_PERM on it and administrators"
    )
    page.get_by_role("link", name="Streams").click()
    doomed = page.get_by_role("form", name="Delete a stream or schema")
    doomed.get_by_label("Object").select_option("stream/in1")
    expect(doomed.locator(".hint")).to_have_text(
        "Only the owner of stream in1 or an administrator may delete it."
    )
    expect(doomed.get_by_role("button", name="Delete")).to_be_disabled()
    assert {user: denials(live, user) for user in ("al", "bob")} == before


def test_the_audit_log_pages_back_filters_by_time_and_shows_details_whole(login, live):
    for n in range(PAGE + 5):
        live.api("joe", "POST", "/roles", json={"name": f"AUDITED{n}"})
    try:
        query = "/audit?user=joe&event=role_add&limit=500"
        total = len(live.api("joe", "GET", query).json()["entries"])
        assert PAGE < total <= 2 * PAGE
        page = login("joe")
        pane = admin_tab(page, "Audit")
        rows = pane.locator("table.audit tbody tr")
        pane.get_by_label("User").fill("joe")
        pane.get_by_label("Event").fill("role_add")
        pane.get_by_role("button", name="Filter").click()
        expect(pane.get_by_role("status")).to_have_text(f"Entries 1 to {PAGE}, newest first.")
        expect(rows).to_have_count(PAGE)
        expect(rows.first).to_contain_text(f"role:AUDITED{PAGE + 4}")
        expect(pane.get_by_role("button", name="Newer")).to_be_disabled()
        pane.get_by_role("button", name="Older").click()
        expect(pane.get_by_role("status")).to_have_text(
            f"Entries {PAGE + 1} to {total}, newest first; no older entries."
        )
        expect(rows).to_have_count(total - PAGE)
        expect(pane.get_by_role("button", name="Older")).to_be_disabled()
        pane.get_by_role("button", name="Newer").click()
        expect(rows).to_have_count(PAGE)
        expect(rows.first).to_contain_text(f"role:AUDITED{PAGE + 4}")

        # Until the second of the first role made here: none of those made later shows.
        first = live.api("joe", "GET", "/audit?object=role:AUDITED0").json()["entries"][0]
        until = page.evaluate(
            "at => { const d = new Date(Math.floor(at) * 1000);"
            " return new Date(d - d.getTimezoneOffset() * 60000).toISOString().slice(0, 19); }",
            first["at"],
        )
        pane.get_by_label("Until").fill(until)
        pane.get_by_role("button", name="Filter").click()
        older = live.api("joe", "GET", f"{query}&until={int(first['at'])}").json()["entries"]
        expect(pane.get_by_role("status")).to_have_text(
            f"Entries 1 to {len(older)}, newest first; no older entries."
            if older
            else "No entries."
        )
        expect(rows.filter(has_text="role:AUDITED")).to_have_count(0)

        # A denial's details, whole and inside its cell.
        live.call("bob", "GET", "/system/settings")
        pane.get_by_label("Until").fill("")
        pane.get_by_label("User").fill("bob")
        pane.get_by_label("Event").fill("system.show")
        pane.get_by_label("Outcome").select_option("false")
        pane.get_by_role("button", name="Filter").click()
        cell = rows.first.locator("td.details")
        expect(cell).to_contain_text('needs ["CHANGE_SYSTEM on the system"]')
        assert cell.evaluate("td => td.scrollWidth <= td.clientWidth")
    finally:
        for n in range(PAGE + 5):
            live.api("joe", "DELETE", f"/roles/AUDITED{n}")


def test_streams_and_schemas_are_deleted_unless_in_use(login, live):
    live.api("joe", "POST", "/schemas", json={"name": "doomed", "fields": {"x": "long"}})
    live.api("joe", "POST", "/streams", json={"name": "doomed_in", "schema": "doomed"})
    page = login("joe")
    page.get_by_role("link", name="Streams").click()
    pane = page.locator("#page-streams")
    form = pane.get_by_role("form", name="Delete a stream or schema")
    delete = form.get_by_role("button", name="Delete")
    expect(delete).to_be_disabled()

    form.get_by_label("Object").select_option("schema/s")
    expect(delete).to_be_enabled()
    delete.click()
    confirm(page, "Delete")
    expect(pane.locator("p.notice").first).to_have_text(
        "schema s is used by stream in1, stream in2; drop or change those first"
    )
    form.get_by_label("Object").select_option("schema/doomed")
    delete.click()
    confirm(page, "Delete")
    expect(pane.locator("p.notice").first).to_have_text(
        "schema doomed is used by stream doomed_in; drop or change those first"
    )

    form.get_by_label("Object").select_option("stream/doomed_in")
    delete.click()
    expect(page.get_by_role("alertdialog")).to_contain_text("Its stored tuples go with it.")
    confirm(page, "Cancel")
    assert live.call("joe", "GET", "/streams/doomed_in").status_code == 200
    delete.click()
    confirm(page, "Delete")
    expect(pane.locator("p.notice").first).to_have_text("Deleted stream doomed_in.")
    form.get_by_label("Object").select_option("schema/doomed")
    delete.click()
    confirm(page, "Delete")
    expect(pane.locator("p.notice").first).to_have_text("Deleted schema doomed.")
    expect(form.get_by_label("Object").locator("option")).not_to_contain_text(["schema doomed"])
    assert live.call("joe", "GET", "/schemas/doomed").status_code == 404


def test_a_bad_csv_file_reports_each_problem_once(login, live, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("time,symbol,price\n2032-01-01T00:00:00Z,X,cheap\n2032-01-01T00:00:01Z,Y,dear\n")
    page = login("ed")
    page.get_by_role("link", name="Streams").click()
    pane = page.locator("#page-streams")
    send = pane.get_by_role("form", name="Send test data")
    send.get_by_label("Into stream").select_option("in1")
    send.get_by_label("File").set_input_files(str(bad))
    send.get_by_role("button", name="Send").click()
    message = pane.locator("p.notice").first
    expect(message).to_have_text(
        "stream 'in1': 2 of 2 tuples are invalid and none was accepted (tuple 0 field 'price': "
        "expected a finite number, got 'cheap'; tuple 1 field 'price': expected a finite "
        "number, got 'dear')"
    )
