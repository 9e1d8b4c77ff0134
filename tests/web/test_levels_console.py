"""The admin console's Levels tab: an administrator builds a Chinese Wall with forms only."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.steps import admin_tab


def test_an_administrator_sets_classes_companies_and_a_clearance(login, live):
    joe = login("joe")
    pane = admin_tab(joe, "Levels")
    status = pane.get_by_role("status")
    classes = pane.get_by_role("table", name="Classes and their companies")
    add_class = pane.get_by_role("form", name="Add a class")
    add_class.get_by_label("Class").fill("web_banks")
    add_class.get_by_role("button", name="Save").click()
    expect(status).to_have_text("Class added.")
    # the pane is drawn again with the new class: a form filled before that could be lost
    expect(classes).to_contain_text("web_banks")
    add_company = pane.get_by_role("form", name="Add a company")
    add_company.get_by_label("Class").select_option("web_banks")
    add_company.get_by_label("Company").fill("WebA")
    add_company.get_by_role("button", name="Save").click()
    expect(status).to_have_text("Company added.")
    expect(classes).to_contain_text("WebA")
    clearance = pane.get_by_role("form", name="Clearance of a role")
    clearance.get_by_label("Role").select_option("CUSTOMER1")
    clearance.get_by_label("web_banks").select_option("WebA")
    clearance.get_by_role("button", name="Save").click()
    expect(status).to_have_text("Clearance set; deliveries follow it from the next batch.")
    assert live.api("joe", "GET", "/levels").json()["clearances"]["CUSTOMER1"] == {
        "web_banks": "WebA"
    }
    expect(pane.get_by_role("table", name="Clearances")).to_contain_text("web_banks: WebA")


def test_a_form_half_filled_survives_the_panel_being_built_again(login, live):
    """A catalog change (here another administrator adds a role) rebuilds the panel; what was
    chosen in a form stays chosen, and saving it saves that."""
    live.api("joe", "POST", "/levels/classes", json={"name": "funds"})
    for company in ("FundA", "FundB"):
        live.api("joe", "POST", "/levels/classes/funds/companies", json={"name": company})
    joe = login("joe")
    pane = admin_tab(joe, "Levels")
    clearance = pane.get_by_role("form", name="Clearance of a role")
    clearance.get_by_label("Role").select_option("CUSTOMER1")
    clearance.get_by_label("funds", exact=True).select_option("FundB")
    live.api("joe", "POST", "/roles", json={"name": "LATECOMER"})
    expect(clearance.get_by_label("Role").locator("option", has_text="LATECOMER")).to_have_count(1)
    expect(clearance.get_by_label("Role")).to_have_value("CUSTOMER1")
    expect(clearance.get_by_label("funds", exact=True)).to_have_value("FundB")
    clearance.get_by_role("button", name="Save").click()
    expect(pane.get_by_role("status")).to_have_text(
        "Clearance set; deliveries follow it from the next batch."
    )
    assert live.api("joe", "GET", "/levels").json()["clearances"]["CUSTOMER1"]["funds"] == "FundB"
