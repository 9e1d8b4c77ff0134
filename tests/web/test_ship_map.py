"""The live map (issue 15, seed 002): a port authority and a ship company, logged in side by side,
watch the same ship-watching diagram (the port authority's, rewritten by its policy; the
company reads its own variant, rewritten by its policy: docs/rewrite.md), and each map shows
exactly the ships the server delivers to that user, with tracks, a colour legend, the coastline
(vendored Natural Earth, no tile server) and, for the port authority, its port's area."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from playwright.sync_api import Page, expect

from tests.web.conftest import Live, screenshot
from tests.web.steps import open_results, watch_scripts

PASSWORD = "a long password for the map"
STREAM = "strait"
POSITION = {
    "fields": {"t": "timestamp", "mmsi": "long", "lat": "double", "lon": "double"},
    "event_time": "t",
}
POLICIES = f"""
policies:
  - name: map-port-boundary
    role: MAPPORT
    streams: {{{STREAM}: "*"}}
    where: "point_in_box(lon, lat, self.west, self.south, self.east, self.north)"
    privilege: read
  - name: map-own-ships
    role: MAPSHIPCO
    streams: {{{STREAM}: "*"}}
    where: "mmsi IN (self.ships)"
    privilege: read
"""
PORT_BOX = {"west": 103.7, "south": 1.2, "east": 103.9, "north": 1.3}
# Four ships sailing east: 1 and 2 inside the port's box (1 the company's), 3 and 4 outside (3
# the company's).
SHIPS = {1: (1.25, 103.75), 2: (1.26, 103.80), 3: (1.10, 104.20), 4: (1.40, 103.50)}
USERS = {"pa_map": "MAPPORT", "sc_map": "MAPSHIPCO"}
SHARED = "map_watch"  # the port authority's diagram, which both watch
EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)


def watch(name: str) -> dict:
    """The same query for everyone: ships with a position."""
    return {
        "version": 1,
        "name": name,
        "inputs": {STREAM: {}},
        "boxes": {"moving": {"type": "filter", "in": STREAM, "where": "mmsi > 0"}},
        "outputs": {f"{name}_out": {"from": "moving"}},
    }


@pytest.fixture(scope="module")
def deployed(live: Live):
    """The port authority's diagram, running, and its output for both users to watch."""
    for role in USERS.values():
        live.api("joe", "POST", "/roles", json={"name": role})
    for user, role in USERS.items():
        live.api(
            "joe", "POST", "/users", json={"name": user, "password": PASSWORD, "roles": [role]}
        )
        live.passwords[user] = PASSWORD
    live.api("joe", "POST", "/schemas", json={"name": "map_position", **POSITION})
    live.api("joe", "POST", "/streams", json={"name": STREAM, "schema": "map_position"})
    for role in USERS.values():
        for type_, name, action in (
            ("schema", "map_position", "VIEW_OBJECT"),
            ("stream", STREAM, "VIEW_OBJECT"),
            ("stream", STREAM, "READ_TUPLE"),
            ("system", "system", "ADD"),
            ("box_type", "filter", "USE"),
        ):
            live.api("joe", "PUT", f"/permissions/{type_}/{name}/{role}/{action}")
    live.api("joe", "POST", "/policies", json={"yaml": POLICIES})
    live.api("joe", "PUT", "/policies/users/pa_map", json={"attributes": PORT_BOX})
    live.api("joe", "PUT", "/policies/users/sc_map", json={"attributes": {"ships": [1, 3]}})
    live.api("pa_map", "POST", "/diagrams", json={"document": watch(SHARED)})
    live.api("pa_map", "POST", f"/diagrams/{SHARED}/deploy")
    output = f"{SHARED}_out"
    for action in ("VIEW_OBJECT", "SUBSCRIBE"):
        live.api("pa_map", "PUT", f"/permissions/output/{output}/MAPSHIPCO/{action}")
    yield output
    live.call("pa_map", "POST", f"/diagrams/{SHARED}/stop")
    live.call("pa_map", "DELETE", f"/diagrams/{SHARED}")
    for policy in ("map-port-boundary", "map-own-ships"):
        live.call("joe", "DELETE", f"/policies/{policy}")


def send(live: Live, tick: int) -> None:
    """One position report per ship, each a little further east than the tick before."""
    t = (EPOCH + timedelta(seconds=tick)).isoformat()
    tuples = [
        {"t": t, "mmsi": m, "lat": lat, "lon": round(lon + 0.01 * tick, 5)}
        for m, (lat, lon) in SHIPS.items()
    ]
    live.api("joe", "POST", f"/streams/{STREAM}/tuples", json=tuples)


def map_ships(page: Page) -> set[int]:
    rows = page.locator("#page-results .map-ships tbody tr")
    return {int(s) for s in rows.evaluate_all("rs => rs.map(r => r.dataset.ship)")}


def delivered(live: Live, user: str, output: str) -> set[int]:
    """The ships the server delivers to ``user`` (its result log, filtered for it)."""
    read = live.api(user, "GET", f"/outputs/{output}/results?from=0&limit=1000").json()
    return {t["mmsi"] for t in read["tuples"]}


def test_port_authority_and_company_see_their_own_ships(live, login, deployed):
    pages = {user: login(user) for user in USERS}
    errors = {user: watch_scripts(page) for user, page in pages.items()}
    for page in pages.values():  # the company's subscribe starts its variant
        open_results(page, deployed)
        expect(page.locator("#page-results .results-map")).to_be_visible()
    for tick in range(3):
        send(live, tick)
    expected = {"pa_map": {1, 2}, "sc_map": {1, 3}}
    for user, page in pages.items():
        rows = page.locator("#page-results .map-ships tbody tr")
        expect(rows).to_have_count(2)
        # every position of the three ticks, as the server delivered them (one track each)
        expect(rows.locator("td:last-child")).to_have_text(["3", "3"])
        assert map_ships(page) == expected[user] == delivered(live, user, deployed)
        area = page.locator("#page-results .map-area")
        expect(area.locator("path.ship-marker")).to_have_count(2)
        expect(area.locator("path.ship-track")).to_have_count(2)
        expect(area.locator("path.map-land").first).to_be_attached()  # the coastline
        # coloured by what the ship came from: the one stream this user may read
        expect(page.locator("#page-results .map-legend li")).to_have_text([STREAM])
        marked = area.locator("path.ship-marker").evaluate_all("ps => ps.map(p => p.dataset.ship)")
        assert {int(s) for s in marked} == expected[user]

    # Only the port authority has a port: its attributes' box, drawn as an area.
    expect(pages["pa_map"].locator(".map-area path.port-area")).to_have_count(1)
    expect(pages["sc_map"].locator(".map-area path.port-area")).to_have_count(0)
    pages["pa_map"].locator("#page-results .results-map").scroll_into_view_if_needed()
    attribution = pages["pa_map"].locator(".map-area .leaflet-control-attribution")
    expect(attribution).to_have_text("Coastline: Natural Earth")
    screenshot(pages["pa_map"], "ship-map-port")
    assert errors == {user: [] for user in USERS}
