"""AIS NMEA posted to a live server (real Spark runtime): the demo's strait traffic goes in as
``text/x-nmea`` to a positions stream and a voyages stream, is stored typed in the durable log
and comes out of a running diagram's output; bad bodies are refused whole, after WRITE."""

from __future__ import annotations

from datetime import datetime, timezone

import pyarrow as pa
import pytest
from serverkit import PASSWORD, Client, overrides, wait_until

from server.cli.ais_demo import Traffic
from server.ingest.segments import Position, read_range

NMEA = {"Content-Type": "text/x-nmea"}
POSITION = {
    "mmsi": "long",
    "lat": "double",
    "lon": "double",
    "sog": "double",
    "cog": "double",
    "heading": "long",
    "ts": "timestamp",
}
VOYAGE = {"mmsi": "long", "name": "string", "destination": "string", "ts": "timestamp"}
VIEW = {
    "version": 1,
    "name": "strait",
    "inputs": {"ais": {}},
    "outputs": {"positions": {"from": "ais"}},
}


def post(client: Client, stream: str, lines: list[str]):
    return client.http.post(
        f"{client.base}/api/v1/streams/{stream}/tuples",
        data="\r\n".join(lines).encode(),
        headers=NMEA,
        timeout=60,
    )


@pytest.fixture
def joe(live):
    joe = Client(live.url, "joe", PASSWORD)
    for name, fields in (("ais_position", POSITION), ("ais_voyage", VOYAGE)):
        joe.call("POST", "/schemas", 201, json={"name": name, "event_time": "ts", "fields": fields})
    joe.call("POST", "/streams", 201, json={"name": "ais", "schema": "ais_position"})
    joe.call("POST", "/streams", 201, json={"name": "voyages", "schema": "ais_voyage"})
    return joe


def stored(live, stream: str) -> list[dict]:
    """What the server's durable log holds for ``stream``, read from its segment files."""
    log = live.app.extensions["sluice"].runtime.log
    head = log.heads([stream])[stream]
    return [
        row
        for frame in read_range(log.directory(stream), Position(0, 0, 0), head)
        for row in pa.ipc.open_stream(frame.payload).read_all().to_pylist()
    ]


def test_strait_traffic_goes_in_as_nmea_and_is_stored_typed(live, joe):
    traffic = Traffic(ships=12, seed=11)
    feed = traffic.tick(30) + traffic.voyages()  # one receiver's feed: both kinds, mixed
    assert post(joe, "ais", feed).json()["count"] == 12
    assert post(joe, "voyages", feed).json()["count"] == 12

    at = datetime.fromtimestamp(traffic.seconds, timezone.utc)
    positions = {t["mmsi"]: t for t in stored(live, "ais")}
    for ship in traffic.ships:
        lon, lat, course = ship.position()
        got = positions[ship.mmsi]
        assert (got["lon"], got["lat"]) == pytest.approx((lon, lat), abs=1e-4)
        assert got["sog"] == round(ship.knots, 1) and got["cog"] == round(course, 1)
        assert isinstance(got["heading"], int)
        assert got["ts"] == at  # the tag block's time
    ships = {t["mmsi"]: (t["name"], t["destination"], t["ts"]) for t in stored(live, "voyages")}
    assert ships == {s.mmsi: (s.name, s.destination, at) for s in traffic.ships}


def test_a_running_diagram_delivers_the_decoded_positions(joe):
    joe.call("POST", "/diagrams", 201, json={"document": VIEW})
    deployed = joe.http.post(f"{joe.base}/api/v1/diagrams/strait/deploy", timeout=300)
    assert deployed.status_code == 200, deployed.text
    traffic = Traffic(ships=5, seed=13)
    assert post(joe, "ais", traffic.tick(30)).json()["count"] == 5

    def results() -> list[dict]:
        return joe.call("GET", "/outputs/positions/results?from=0")["tuples"]

    wait_until(lambda: len(results()) == 5, 120, "the positions out of the diagram")
    assert {(t["mmsi"], t["ts"]) for t in results()} == {
        (s.mmsi, datetime.fromtimestamp(traffic.seconds, timezone.utc).isoformat())
        for s in traffic.ships
    }


def test_a_bad_line_refuses_the_body_whole_and_names_it(joe):
    traffic = Traffic(ships=3, seed=12)
    first = post(joe, "ais", traffic.tick(10)).json()
    lines = traffic.tick(10)
    bad = post(joe, "ais", [*lines[:2], lines[2][:-1] + "0", *lines])  # a wrong checksum
    assert bad.status_code == 400
    error = bad.json()["error"]
    assert error["code"] == "BAD_NMEA"
    assert "at line 3: its checksum does not match" in error["message"]
    # Nothing of the refused body was appended: the next batch follows the first directly.
    after = post(joe, "ais", lines).json()
    assert after["first_seq"] == first["first_seq"] + first["count"]


def test_a_stream_no_ais_message_fits_is_refused(joe):
    joe.call(
        "POST",
        "/schemas",
        201,
        json={"name": "quotes", "fields": {"symbol": "string", "price": "double"}},
    )
    joe.call("POST", "/streams", 201, json={"name": "prices", "schema": "quotes"})
    answer = post(joe, "prices", Traffic(ships=1).tick(1))
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "NMEA_SCHEMA"
    assert "stream 'prices' takes no AIS message" in answer.json()["error"]["message"]


def test_without_write_the_body_is_never_judged(joe):
    joe.call("POST", "/roles", 201, json={"name": "WATCHER"})
    joe.call(
        "POST", "/users", 201, json={"name": "bob", "password": PASSWORD, "roles": ["WATCHER"]}
    )
    joe.call("PUT", "/permissions/stream/ais/WATCHER/VIEW_OBJECT")
    bob = Client(joe.base, "bob", PASSWORD)
    answer = post(bob, "ais", ["not NMEA at all"])
    assert answer.status_code == 403
    assert answer.json()["error"]["code"] != "BAD_NMEA"


def test_the_demo_sends_strait_traffic_as_ed(tmp_path, spark):
    """``serve --demo`` seeds the AIS streams and Ed's feed fills them through ingestion."""
    from server.app import close_app, create_app
    from server.cli.demo import start_demo
    from server.control.diagrams import start_runtime
    from server.runtime import Runtime

    app = create_app(overrides(tmp_path))
    svc = app.extensions["sluice"]
    try:
        start_runtime(svc, Runtime(tmp_path / "runtime", session=spark))
        start_demo(svc)
        live = type("Live", (), {"app": app})
        wait_until(lambda: len(stored(live, "voyages")) == 40, 60, "the demo's voyage data")
        wait_until(lambda: len(stored(live, "ais")) >= 80, 60, "two rounds of positions")
        assert len(stored(live, "routes")) >= 40 * (1 + 10 * 0.9)
        ships = {t["mmsi"] for t in stored(live, "ais")}
        assert ships == {t["mmsi"] for t in stored(live, "voyages")}
        assert all(103.3 < t["lon"] < 104.5 and 1.0 < t["lat"] < 1.4 for t in stored(live, "ais"))
    finally:
        close_app(app)


def _sentence(payload: str) -> str:
    body = f"AIVDM,1,1,,A,{payload},0"
    checksum = 0
    for char in body:
        checksum ^= ord(char)
    return f"!{body}*{checksum:02X}"


@pytest.mark.parametrize("char", ["x", "~", "X"])
def test_a_payload_character_outside_six_bit_ascii_refuses_the_body(live, joe, char):
    """pyais decodes any ASCII payload; AIS armours six bits in 0-W and `-w only."""
    payload = "15M67FC000G?ufbE`FepT@3n00Sa"
    assert post(joe, "ais", [_sentence(payload)]).status_code == 200
    bad = post(joe, "ais", [_sentence(payload), _sentence(payload.replace("5M", char + "M"))])
    assert bad.status_code == 400
    error = bad.json()["error"]
    assert error["code"] == "BAD_NMEA"
    assert f"at line 2: its payload holds {char!r}" in error["message"]
    assert len(stored(live, "ais")) == 1
