"""The admin console's Policies tab: an administrator adds a policy from YAML, sets a user's
attributes and drops the policy, with forms only. The policy names a stream no other test reads
(the server is shared by the web tests), made for it: a policy holds over a stream's schema."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.steps import admin_tab, confirm
from tests.web.test_editor import open_diagram

YAML = """policies:
  - name: web-own-ships
    role: CUSTOMER1
    streams: {web_nowhere: "*"}
    where: "mmsi IN (self.ships)"
    privilege: read"""


def test_an_administrator_adds_a_policy_sets_attributes_and_drops_it(login, live):
    fields = {"mmsi": "long"}
    live.api("joe", "POST", "/schemas", json={"name": "web_nowhere_pos", "fields": fields})
    live.api("joe", "POST", "/streams", json={"name": "web_nowhere", "schema": "web_nowhere_pos"})
    joe = login("joe")
    pane = admin_tab(joe, "Policies")
    status = pane.get_by_role("status")
    add = pane.get_by_role("form", name="Add policies")
    add.get_by_label("YAML").fill(YAML)
    add.get_by_role("button", name="Save").click()
    expect(status).to_have_text("Policies added.")
    policies = pane.get_by_role("table", name="Policies")
    expect(policies).to_contain_text("mmsi IN (self.ships)")
    assert [p["name"] for p in live.api("joe", "GET", "/policies").json()["policies"]] == [
        "web-own-ships"
    ]

    # A policy the model refuses is reported with the server's words, and nothing is added.
    add.get_by_label("YAML").fill(YAML.replace("read", "write"))
    add.get_by_role("button", name="Save").click()
    expect(status).to_contain_text("policy web-own-ships: 'privilege' is read, join, aggregate")

    attributes = pane.get_by_role("form", name="Attributes of a user")
    attributes.get_by_label("User").select_option("al")
    attributes.get_by_label("Attributes (JSON)").fill('{"ships": [1, 2]}')
    attributes.get_by_role("button", name="Save").click()
    expect(status).to_have_text("Attributes set.")
    assert live.api("joe", "GET", "/policies/users/al").json() == {"attributes": {"ships": [1, 2]}}
    attributes.get_by_label("Attributes (JSON)").fill("not json")
    attributes.get_by_role("button", name="Save").click()
    expect(status).to_contain_text("must be JSON")

    pane.get_by_role("button", name="Drop policy web-own-ships").click()
    confirm(joe, "Drop")
    expect(status).to_have_text("Dropped policy web-own-ships.")
    expect(policies).not_to_contain_text("web-own-ships")
    assert live.api("joe", "GET", "/policies").json()["policies"] == []
    live.api("joe", "PUT", "/policies/users/al", json={"attributes": {}})


def test_the_editor_shows_what_the_policies_added_to_a_deployed_diagram(login, live):
    """joe's policy keeps his own ships of a stream only this test reads; his deployed
    diagram shows the filter it put in, and his query stays his own."""
    live.api("joe", "POST", "/schemas", json={"name": "web_pos", "fields": {"mmsi": "long"}})
    live.api("joe", "POST", "/streams", json={"name": "web_ais", "schema": "web_pos"})
    policy = {
        "name": "web-ships",
        "role": "ADMIN",
        "streams": {"web_ais": "*"},
        "where": "mmsi IN (self.ships)",
        "privilege": "read",
    }
    live.api("joe", "POST", "/policies", json={"policies": [policy]})
    live.api("joe", "PUT", "/policies/users/joe", json={"attributes": {"ships": [1, 2]}})
    doc = {
        "version": 1,
        "name": "web_rewritten",
        "inputs": {"web_ais": {}},
        "boxes": {"known": {"type": "filter", "in": "web_ais", "where": "mmsi > 0"}},
        "outputs": {"web_rewritten_out": {"from": "known"}},
    }
    live.api("joe", "POST", "/diagrams", json={"document": doc})
    live.api("joe", "POST", "/diagrams/web_rewritten/deploy")
    try:
        page = login("joe")
        open_diagram(page, "web_rewritten")
        note = page.get_by_role("region", name="Added by joe's policies")
        expect(note).to_contain_text("secure read: ")
        expect(note).to_contain_text("keeps mmsi IN (1, 2) (web-ships)")
        expect(page.locator("#drawflow .drawflow-node")).to_have_count(3)  # the query as written
    finally:
        live.api("joe", "POST", "/diagrams/web_rewritten/stop")
        live.api("joe", "DELETE", "/diagrams/web_rewritten")
        live.api("joe", "DELETE", "/policies/web-ships")
        live.api("joe", "PUT", "/policies/users/joe", json={"attributes": {}})
