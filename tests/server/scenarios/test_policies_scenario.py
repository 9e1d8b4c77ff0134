"""ASSIST policies end to end on a live server (real Spark, HTTP and socket.io clients): a port
authority restricted to its port's boundary and a ship company restricted to its own ships
deploy the same query and receive different, correct ship positions; a box preview shows
each viewer its own rewrite; a change of a deployer's
attributes stops the stale diagram and tells its subscribers, and the other runs on."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from serverkit import PASSWORD, Client, wait_until

EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)
POSITION = {
    "fields": {"t": "timestamp", "mmsi": "long", "lat": "double", "lon": "double"},
    "event_time": "t",
}
POLICIES = """
policies:
  - name: port-boundary
    role: PORT
    streams: {ais: "*"}
    where: "point_in_box(lon, lat, self.west, self.south, self.east, self.north)"
    privilege: read
  - name: own-ships
    role: SHIPCO
    streams: {ais: "*"}
    where: "mmsi IN (self.ships)"
    privilege: read
"""
# The port of Singapore's box, and four ships: two in it (1 of the company's), two outside.
PORT_BOX = {"west": 103.7, "south": 1.2, "east": 103.9, "north": 1.3}
SHIPS = {1: (1.25, 103.8), 2: (1.26, 103.85), 3: (1.10, 104.2), 4: (1.40, 103.5)}


def watch(name: str) -> dict:
    """The same query for everyone: ships with a position."""
    return {
        "version": 1,
        "name": name,
        "inputs": {"ais": {}},
        "boxes": {"moving": {"type": "filter", "in": "ais", "where": "mmsi > 0"}},
        "outputs": {f"{name}_out": {"from": "moving"}},
    }


def positions(n: int) -> list[dict]:
    t = (EPOCH + timedelta(seconds=n)).isoformat()
    return [{"t": t, "mmsi": m, "lat": lat, "lon": lon} for m, (lat, lon) in SHIPS.items()]


def ships(client: Client) -> set[int]:
    return {t["mmsi"] for t in client.received}


def set_up(joe: Client) -> None:
    for role in ("PORT", "SHIPCO", "OTHERCO"):
        joe.call("POST", "/roles", 201, json={"name": role})
    for user, role in (("pa", "PORT"), ("sc", "SHIPCO"), ("oc", "OTHERCO")):
        joe.call("POST", "/users", 201, json={"name": user, "password": PASSWORD, "roles": [role]})
    joe.call("POST", "/schemas", 201, json={"name": "position", **POSITION})
    joe.call("POST", "/streams", 201, json={"name": "ais", "schema": "position"})
    for role in ("PORT", "SHIPCO", "OTHERCO"):
        for type_, name, action in (
            ("schema", "position", "VIEW_OBJECT"),
            ("stream", "ais", "VIEW_OBJECT"),
            ("stream", "ais", "READ_TUPLE"),
            ("system", "system", "ADD"),
            ("box_type", "filter", "USE"),
        ):
            joe.call("PUT", f"/permissions/{type_}/{name}/{role}/{action}")
    joe.call("POST", "/policies", 201, json={"yaml": POLICIES})
    joe.call("PUT", "/policies/users/pa", json={"attributes": PORT_BOX})
    joe.call("PUT", "/policies/users/sc", json={"attributes": {"ships": [1, 3]}})


def test_two_deployers_see_what_their_policies_allow(live):
    joe = Client(live.url, "joe", PASSWORD)
    set_up(joe)
    pa, sc, oc = (Client(live.url, user, PASSWORD) for user in ("pa", "sc", "oc"))

    # No policy of OTHERCO's covers the protected stream: its deploy is refused, naming it.
    oc.call("POST", "/diagrams", 201, json={"document": watch("oc_watch")})
    denied = oc.call("POST", "/diagrams/oc_watch/deploy", 403)["error"]
    assert (denied["code"], denied["details"]["stream"]) == ("REWRITE_DENIED", "ais")
    assert oc.call("GET", "/diagrams/oc_watch/status")["status"] == "stopped"

    for client in (pa, sc):
        name = f"{client.user}_watch"
        client.call("POST", "/diagrams", 201, json={"document": watch(name)})
        client.call("POST", f"/diagrams/{name}/deploy")
        client.connect()
        assert client.emit("subscribe", {"output": f"{name}_out"}) == {"subscribed": f"{name}_out"}
    described = pa.call("GET", "/diagrams/pa_watch")
    [added] = described["rewrite"]["added"]
    assert (added["operator"], added["policies"]) == ("secure read", ["port-boundary"])
    assert "103.7" in added["where"] and described["rewrite"]["stale"] is None
    assert described["document"] == watch("pa_watch")  # the stored query is the user's own

    joe.call("POST", "/streams/ais/tuples", json=positions(1))
    wait_until(lambda: ships(pa) == {1, 2} and ships(sc) == {1, 3}, 120, "each one's ships")

    # A reader whose policies rewrite pa's diagram differently reads a variant run for its own
    # rewrite (test_rewrite_variants.py). The editor's preview of a box shows it as it runs
    # for the viewer: rewritten for the port (the user's own filter alone would pass ship 3
    # too), and for a company viewer under the company's rewrite.
    sc_ended: list[dict] = []
    sc.sock.on("subscription_ended", sc_ended.append)
    preview = "/diagrams/pa_watch/boxes/moving/preview"
    assert {t["mmsi"] for t in pa.call("GET", preview)["tuples"]} == {1, 2}
    pa.call("PUT", "/permissions/diagram/pa_watch/SHIPCO/VIEW_OBJECT")
    assert {t["mmsi"] for t in sc.call("GET", preview)["tuples"]} == {1, 3}

    # The company's ship list changes: sc's diagram runs on, rewritten for the new list in
    # place of the old, and its subscriber moves with it (told, not ended); the port's runs on.
    sc_moved: list[dict] = []
    sc.sock.on("subscription_moved", sc_moved.append)
    changed = joe.call("PUT", "/policies/users/sc", json={"attributes": {"ships": [2]}})
    assert changed["stopped"] == []
    wait_until(lambda: sc_moved, 30, "the subscriber is moved")
    assert sc_moved == [{"output": "sc_watch_out"}] and not sc_ended
    running = sc.call("GET", "/diagrams/sc_watch")
    assert running["status"] == "running" and running["rewrite"]["stale"] is None
    assert running["rewrite"]["added"][0]["where"] == "mmsi IN (2)"
    sc.received.clear()
    joe.call("POST", "/streams/ais/tuples", json=positions(2))
    wait_until(lambda: len(pa.received) == 4 and ships(sc) == {2}, 120, "the new list's ship")

    # No list at all: the company's policy cannot apply, the diagram is denied now. It is
    # stopped as stale, its subscriber told why, naming the stream and the policy's reason.
    changed = joe.call("PUT", "/policies/users/sc", json={"attributes": {}})
    assert changed["stopped"] == ["sc_watch"]
    wait_until(lambda: sc_ended, 30, "the stale diagram's subscriber is told")
    error = sc_ended[0]["error"]
    assert error["code"] == "REWRITE_STALE"
    assert "stream 'ais'" in error["message"] and "no attribute 'ships'" in error["message"]
    stale = sc.call("GET", "/diagrams/sc_watch")
    assert stale["status"] == "stopped" and "'own-ships'" in stale["rewrite"]["stale"]
    entries = joe.call("GET", "/audit?event=rewrite_stale")["entries"]
    assert entries[0]["object"] == "diagram:sc_watch" and entries[0]["user"] == "joe"
    before = len(sc.received)
    joe.call("POST", "/streams/ais/tuples", json=positions(3))
    wait_until(lambda: len(pa.received) == 6, 120, "the port's next tuples")
    assert len(sc.received) == before

    # Given a list and deployed again, it runs under it.
    joe.call("PUT", "/policies/users/sc", json={"attributes": {"ships": [1, 3]}})
    sc.call("POST", "/diagrams/sc_watch/deploy")
    assert sc.call("GET", "/diagrams/sc_watch")["rewrite"]["stale"] is None
    for client in (joe, pa, sc, oc):
        client.close()
