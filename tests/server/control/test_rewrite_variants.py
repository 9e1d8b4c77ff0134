"""Per-reader variants on a live server (real Spark, HTTP and socket.io clients): a port
authority and ship companies subscribe to the SAME rewritten diagram's output and each
receives what its own policies give (checked against a Python reference), readers with the
same rewrite share one variant, the label SecFilter still applies on top, a denied reader is
refused, the cap refuses one variant too many, a change of attributes moves a reader's
subscription to the variant of its new rewrite (stopping the one no one reads any more), and
stopping the diagram ends the variants' subscriptions."""

from __future__ import annotations

import pytest
from serverkit import PASSWORD, Client, wait_until

from server.runtime import sharing
from tests.server.scenarios.test_policies_scenario import PORT_BOX, SHIPS, positions, set_up, watch

OUT = "pa_watch_out"


def in_port(mmsi: int) -> bool:
    lat, lon = SHIPS[mmsi]
    box = PORT_BOX
    return box["west"] <= lon <= box["east"] and box["south"] <= lat <= box["north"]


def reference(reader: str, ships_of: dict[str, list[int]]) -> set[int]:
    """What post-filtering by the reader's own policy gives over one batch of ``positions``."""
    if reader == "pa":
        return {m for m in SHIPS if in_port(m)}
    return {m for m in SHIPS if m in ships_of[reader]}


def ships(client: Client) -> set[int]:
    return {t["mmsi"] for t in client.received}


def listen(client: Client) -> tuple[list[str], list[dict]]:
    """Connect; the output names the tuples arrive under, and subscription_ended events."""
    client.connect()
    names: list[str] = []
    ended: list[dict] = []

    def tuples(data) -> None:
        names.append(data["output"])
        client._tuples(data)

    client.sock.on("tuples", tuples)
    client.sock.on("subscription_ended", ended.append)
    return names, ended


def test_readers_of_one_diagram_each_get_their_own_rewrite(live):
    svc = live.app.extensions["sluice"]
    joe = Client(live.url, "joe", PASSWORD)
    set_up(joe)
    attributes = {"sc": [1, 3], "sc2": [1, 3], "sd": [4]}
    for user in ("sc2", "sd"):
        body = {"name": user, "password": PASSWORD, "roles": ["SHIPCO"]}
        joe.call("POST", "/users", 201, json=body)
        joe.call("PUT", f"/policies/users/{user}", json={"attributes": {"ships": attributes[user]}})
    pa, sc, sc2, sd, oc = (Client(live.url, u, PASSWORD) for u in ("pa", "sc", "sc2", "sd", "oc"))

    pa.call("POST", "/diagrams", 201, json={"document": watch("pa_watch")})
    pa.call("POST", "/diagrams/pa_watch/deploy")
    for role in ("SHIPCO", "OTHERCO"):
        for action in ("VIEW_OBJECT", "SUBSCRIBE"):
            pa.call("PUT", f"/permissions/output/{OUT}/{role}/{action}")
    listened = {c.user: listen(c) for c in (pa, sc, sc2, sd, oc)}
    for client in (pa, sc, sc2):
        assert client.emit("subscribe", {"output": OUT}) == {"subscribed": OUT}
    # sc and sc2 have the same ship list: one variant for both; the port reads the diagram.
    [variant] = svc.variants.running("pa_watch")
    assert variant.startswith("pa_watch.v-") and variant in svc.runtime.on_disk()
    # OTHERCO's policies deny the stream: refused, naming it, with SUBSCRIBE granted.
    denied = oc.emit("subscribe", {"output": OUT})["error"]
    assert (denied["code"], denied["details"]["stream"]) == ("REWRITE_DENIED", "ais")
    assert oc.call("GET", f"/outputs/{OUT}/recent", 403)["error"]["code"] == "REWRITE_DENIED"

    joe.call("POST", "/streams/ais/tuples", json=positions(1))
    want = {u: reference(u, attributes) for u in ("pa", "sc", "sc2")}
    assert want == {"pa": {1, 2}, "sc": {1, 3}, "sc2": {1, 3}}
    wait_until(
        lambda: all(ships(c) == want[c.user] for c in (pa, sc, sc2)), 120, "each one's ships"
    )
    for client in (pa, sc, sc2):
        assert set(listened[client.user][0]) == {OUT}  # under the public name only
    # REST reads the variant too, from its own result log.
    assert {t["mmsi"] for t in sc.call("GET", f"/outputs/{OUT}/recent")["tuples"]} == {1, 3}
    read = sc.call("GET", f"/outputs/{OUT}/results", params={"from": 0})
    assert {t["mmsi"] for t in read["tuples"]} == {1, 3} and read["next"] == 2
    # ... and a reader whose variant does not run is told to subscribe first.
    missing = sd.call("GET", f"/outputs/{OUT}/recent", 409)["error"]
    assert missing["code"] == "REWRITE_VARIANT_NOT_RUNNING"
    # A server relaying results asks for a reader's route (docs/deploy.md): the variant for
    # sc, the output itself for the port, a denial for OTHERCO.
    routed = f"{OUT}.v-{variant.split('.v-')[1]}"
    asked = sc.call("POST", f"/outputs/{OUT}/variant")
    assert asked == {"output": OUT, "route": routed}
    assert pa.call("POST", f"/outputs/{OUT}/variant")["route"] == OUT
    denied = oc.call("POST", f"/outputs/{OUT}/variant", 403)["error"]
    assert denied["code"] == "REWRITE_DENIED"
    assert svc.variants.running("pa_watch") == [variant]

    # The label SecFilter applies on top of the variant: without READ_TUPLE on the stream,
    # a company's subscribers receive nothing of the next batch, which the variant produced.
    joe.call("DELETE", "/permissions/stream/ais/SHIPCO/READ_TUPLE")
    joe.call("POST", "/streams/ais/tuples", json=positions(2))
    wait_until(lambda: len(pa.received) == 4, 120, "the port's next tuples")
    wait_until(lambda: svc.runtime.recent(routed).num_rows == 4, 120, "the variant's batch")
    assert len(sc.received) == 2 and len(sc2.received) == 2
    joe.call("PUT", "/permissions/stream/ais/SHIPCO/READ_TUPLE")

    # The cap: one variant per diagram now, and sd's rewrite (ship 4) needs another.
    joe.call("PATCH", "/system/settings", json={"max_rewrite_variants": 1})
    full = sd.emit("subscribe", {"output": OUT})["error"]
    assert (full["code"], full["details"]["limit"]) == ("REWRITE_VARIANTS_FULL", 1)

    joe.call("PATCH", "/system/settings", json={"max_rewrite_variants": 4})

    # sc's ship list changes: its rewrite is no longer the variant's, so its subscription
    # moves to a variant of its new rewrite (started for it, and it is told); sc2 still reads
    # the first. The port's diagram is not stale and runs on.
    moved: dict[str, list] = {"sc": [], "sc2": []}
    for client in (sc, sc2):
        client.sock.on("subscription_moved", moved[client.user].append)
    changed = joe.call("PUT", "/policies/users/sc", json={"attributes": {"ships": [2]}})
    assert changed["stopped"] == []
    wait_until(lambda: moved["sc"], 30, "the changed reader is moved")
    sc_ended = listened["sc"][1]
    assert moved["sc"] == [{"output": OUT}] and not sc_ended and not moved["sc2"]
    [again] = [v for v in svc.variants.running("pa_watch") if v != variant]
    assert svc.variants.running("pa_watch") == sorted([variant, again])
    # sc2 changes too: it moves to the variant sc reads, and the first, read by no one, stops.
    joe.call("PUT", "/policies/users/sc2", json={"attributes": {"ships": [2]}})
    wait_until(lambda: moved["sc2"], 30, "the second reader is moved")
    assert svc.variants.running("pa_watch") == [again] and not listened["sc2"][1]
    attributes.update(sc=[2], sc2=[2])
    sc.received.clear()
    sc2.received.clear()
    joe.call("POST", "/streams/ais/tuples", json=positions(3))
    wait_until(
        lambda: ships(sc) == ships(sc2) == reference("sc", attributes) == {2}, 120, "the new list"
    )

    # Stopping the diagram ends its variants and tells their subscribers.
    pa.call("POST", "/diagrams/pa_watch/stop")
    wait_until(lambda: sc_ended, 30, "the variant's subscriber is told")
    assert sc_ended[0]["error"]["code"] == "VARIANT_ENDED"
    assert svc.variants.running("pa_watch") == []
    assert not any(d.startswith("pa_watch.v-") for d in svc.runtime.on_disk())
    for client in (joe, pa, sc, sc2, sd, oc):
        client.close()


def subscribe(client: Client) -> dict:
    """Subscribe to OUT, waiting as long as a variant's start may take in a fresh server on a
    loaded machine (its Spark workers may need a restart to connect back)."""
    return client.sock.call("subscribe", {"output": OUT}, timeout=200)


@pytest.mark.spark  # Spark in the `sluice serve` process, which no fixture tells
def test_variants_do_not_survive_a_restart_and_readers_subscribe_again(serve):
    """A killed server leaves a variant's checkpoints on disk: the next start deletes them
    (they would hold the ingestion log's compaction back), resumes the diagram itself, and a
    reader that subscribes again gets a fresh variant of its own rewrite."""
    server = serve(admin_user="joe", admin_password=PASSWORD)
    server.start()
    joe = Client(server.url, "joe", PASSWORD)
    set_up(joe)
    pa, sc = (Client(server.url, user, PASSWORD) for user in ("pa", "sc"))
    pa.call("POST", "/diagrams", 201, json={"document": watch("pa_watch")})
    pa.call("POST", "/diagrams/pa_watch/deploy")
    for action in ("VIEW_OBJECT", "SUBSCRIBE"):
        pa.call("PUT", f"/permissions/output/{OUT}/SHIPCO/{action}")
    sc.connect()
    assert subscribe(sc) == {"subscribed": OUT}
    diagrams = server.data / "runtime" / "diagrams"
    [variant] = [p.name for p in diagrams.iterdir() if ".v-" in p.name]
    sc.close()
    server.kill()

    server.start()
    names = sorted(p.name for p in diagrams.iterdir())
    hosts = [name for name in names if name.startswith(sharing.HOST)]
    assert [name for name in names if name not in hosts] == ["pa_watch"]
    assert len(hosts) == 1  # pa_watch's shared execution; the variant's went with it
    sc = Client(server.url, "sc", PASSWORD)
    sc.connect()
    assert subscribe(sc) == {"subscribed": OUT}
    assert [p.name for p in diagrams.iterdir() if ".v-" in p.name] == [variant]  # same rewrite
    joe = Client(server.url, "joe", PASSWORD)
    joe.call("POST", "/streams/ais/tuples", json=positions(1))
    wait_until(lambda: ships(sc) == reference("sc", {"sc": [1, 3]}), 120, "sc's own ships")
    for client in (joe, sc):
        client.close()
