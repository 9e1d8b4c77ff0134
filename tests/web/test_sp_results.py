"""Security punctuations in Chromium: two roles watch one output of a stream its provider
governs with sps, side by side; each page shows the policy of the rows arriving; the provider
narrows its policy to one role mid-stream and the other role's view stops while the first's
continues; an attribute-level policy shows one role the fields it may read and "hidden" where
the others are."""

from __future__ import annotations

import datetime as dt

import pytest
from playwright.sync_api import expect

from tests.web.conftest import screenshot
from tests.web.steps import open_results, result_rows

START = dt.datetime(2041, 1, 1, tzinfo=dt.timezone.utc)
OUTPUT = "ward_seen"


@pytest.fixture(scope="module")
def ward(live):
    fields = {"t": "timestamp", "patient": "long", "bpm": "long"}
    live.api("joe", "POST", "/schemas", json={"name": "vit", "fields": fields, "event_time": "t"})
    live.api("joe", "POST", "/streams", json={"name": "vitals_web", "schema": "vit"})
    governed = {"governed": True, "tid_field": "patient"}
    live.api("joe", "PUT", "/streams/vitals_web/punctuations", json=governed)
    doc = {
        "version": 1,
        "name": "ward_web",
        "inputs": {"vitals_web": {}},
        "outputs": {OUTPUT: {"from": "vitals_web"}},
    }
    live.api("joe", "POST", "/diagrams", json={"document": doc})
    live.api("joe", "POST", "/diagrams/ward_web/deploy")
    for role in ("CUSTOMER1", "CUSTOMER2"):
        for type_, name, action in (
            ("schema", "vit", "VIEW_OBJECT"),
            ("stream", "vitals_web", "VIEW_OBJECT"),
            ("stream", "vitals_web", "READ_TUPLE"),
            ("output", OUTPUT, "VIEW_OBJECT"),
            ("output", OUTPUT, "SUBSCRIBE"),
        ):
            live.api("joe", "PUT", f"/permissions/{type_}/{name}/{role}/{action}")
    yield
    # gone again, so that later tests on this shared server see only their own objects
    live.api("joe", "POST", "/diagrams/ward_web/stop")
    live.api("joe", "DELETE", "/diagrams/ward_web")
    live.api("joe", "DELETE", "/streams/vitals_web")
    live.api("joe", "DELETE", "/schemas/vit")


def sp(roles, ts: int, sn: int = 1, **ddp) -> dict:
    return {"sp": {"ddp": {"streams": "vitals_web", **ddp}, "srp": roles, "ts": ts, "sn": sn}}


def send(live, roles, ts: int, patient: int, more: tuple = ()) -> None:
    """One tuple of ``patient`` under a new policy: ``roles`` read it, and ``more`` sps."""
    when = (START + dt.timedelta(seconds=patient)).isoformat()
    stamp = {"ts": ts, "csn": 1 + len(more)}
    row = {"t": when, "patient": patient, "bpm": 60 + patient, "_stamp": stamp}
    live.api("joe", "POST", "/streams/vitals_web/tuples", json=[sp(roles, ts), *more, row])


def test_a_policy_change_stops_one_roles_view_while_the_others_continues(login, live, ward):
    al, bob = login("al"), login("bob")  # CUSTOMER1, CUSTOMER2
    for page in (al, bob):
        open_results(page, OUTPUT)
    send(live, ["CUSTOMER1", "CUSTOMER2"], 1, 1)
    for page, role in ((al, "CUSTOMER1"), (bob, "CUSTOMER2")):
        expect(result_rows(page)).to_have_count(1, timeout=150_000)
        expect(page.locator("#page-results .policy")).to_have_text(
            f"Security policy of the arriving rows: readable by your roles {role}"
        )
    send(live, "CUSTOMER1", 2, 2)  # the provider narrows its policy to CUSTOMER1
    expect(result_rows(al)).to_have_count(2, timeout=120_000)
    screenshot(al, "sp-results-customer1")
    screenshot(bob, "sp-results-customer2")
    expect(result_rows(bob)).to_have_count(1)
    send(live, ["CUSTOMER1", "CUSTOMER2"], 3, 3)  # and widens it again
    expect(result_rows(bob)).to_have_count(2, timeout=120_000)
    expect(result_rows(al)).to_have_count(3)
    # bob's newest row is patient 3's (bpm 63), not patient 2's, which only CUSTOMER1 saw
    expect(bob.locator("table.tuples tbody tr").first).to_contain_text("63")
    expect(bob.locator("table.tuples tbody tr", has_text="62")).to_have_count(0)
    # An attribute-level policy: CUSTOMER2 may read the heart rate only. bob's row shows it,
    # and "hidden" where the patient and the time are; al's shows all.
    send(live, "CUSTOMER1", 4, 4, (sp("CUSTOMER2", 4, 2, attributes="bpm"),))
    expect(result_rows(bob)).to_have_count(3, timeout=120_000)
    newest = bob.locator("table.tuples tbody tr").first
    expect(newest).to_contain_text("64")
    expect(newest.locator("td.withheld")).to_have_count(2)
    expect(newest.locator("td.withheld").first).to_have_text("hidden")
    expect(result_rows(al)).to_have_count(4)
    expect(al.locator("table.tuples tbody tr").first.locator("td.withheld")).to_have_count(0)
    screenshot(bob, "sp-results-hidden-fields")
