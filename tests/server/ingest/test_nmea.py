"""AIS NMEA bodies to tuples (``server/ingest/nmea.py``) and the demo's strait traffic
(``server/cli/ais_demo.py``), without a server: the server tests post the same sentences."""

from __future__ import annotations

import functools
import math
import operator
import statistics

import pytest
from pyais.encode import encode_dict

from boxes import codes
from boxes.errors import InvalidInput
from boxes.types import parse_schema
from server.cli.ais_demo import EASTBOUND, FAKE_PER_SHIP, PORTS, WESTBOUND, Traffic
from server.cli.demo import AIS_SCHEMAS
from server.ingest.nmea import read_nmea

POSITIONS = parse_schema(AIS_SCHEMAS["ais_position"], "p")[0]  # the demo's
VOYAGES = parse_schema(
    {
        "fields": {
            "mmsi": "long",
            "name": "string",
            "ship_type": "long",
            "destination": "string",
            "time": "timestamp",
        },
        "event_time": "time",
    },
    "v",
)[0]
# The paper's Table 1 sentence (a type 4, base station report) as printed: its checksum is 1F.
TABLE_1 = "!AIVDM,1,1,,B,4h5GdQ1ueHeBN7Jj5d0ga6W00<=1,0*42"
BASE_STATION = "!AIVDM,1,1,,B,405GdQ1uh@P007Jiud0g`6P00000,0*3E"  # its station, re-encoded
REPORT = "!AIVDM,1,1,,A,13HOI:0P0000VOHLCnHQKwvL05Ip,0*23"  # pyais's own example, type 1
TAGGED = "\\s:2573345,c:1671620143*08\\" + REPORT
VOYAGE = encode_dict(
    {
        "type": 5,
        "mmsi": 366123456,
        "shipname": "EVER GIVEN",
        "destination": "SINGAPORE",
        "ship_type": 70,
        "callsign": "H3RC",
        "imo": 9811000,
        "draught": 12.5,
    },
    sentence_type="VDM",
    seq_id=3,
)


def sentence(payload: str) -> str:
    """A one-fragment !AIVDM sentence of ``payload`` with its right checksum."""
    text = f"AIVDM,1,1,,A,{payload},0"
    return f"!{text}*{functools.reduce(operator.xor, text.encode(), 0):02X}"


def body(*lines: str) -> bytes:
    return "\r\n".join(lines).encode()


def test_position_reports_become_typed_tuples_and_the_rest_is_passed_over():
    tuples = read_nmea(body(BASE_STATION, TAGGED, *VOYAGE, "", REPORT), POSITIONS, "ais")
    first = {"mmsi": 227006760, "lat": 49.475577, "lon": 0.13138, "sog": 0.0, "cog": 36.7}
    assert tuples == [
        {**first, "heading": 511, "ts": 1671620143.0},  # the tag block's receiver time
        {**first, "heading": 511},  # no tag block: the arrival time, as a JSON tuple
    ]


def test_voyage_data_is_assembled_from_its_fragments_into_the_schemas_fields():
    assert read_nmea(body(REPORT, *VOYAGE), VOYAGES, "voyages") == [
        {"mmsi": 366123456, "name": "EVER GIVEN", "ship_type": 70, "destination": "SINGAPORE"}
    ]


BAD = [
    (body(REPORT, "hello"), 2, "not an AIS sentence"),
    (body(REPORT, "$GPGGA,123519,4807.038,N*47"), 2, "not an AIS sentence"),
    (body(REPORT[:-1] + "4"), 1, "its checksum does not match"),
    (body(REPORT, TABLE_1), 2, "its checksum does not match"),
    (body("!AIVDM,1,1,,A"), 1, "not an AIS sentence"),
    (body(sentence("1")), 1, "the type 1 payload is too short to hold mmsi"),
    (body(REPORT, sentence("13HOI:0P0000VOHLCnHQ")), 2, "too short to hold heading"),
    (body(REPORT, VOYAGE[1]), 2, "fragment 2 of 2 where fragment 1 was due"),
    (body(VOYAGE[0], REPORT), 1, "fragment 1 of 2 is not followed by the rest"),
    (b"!AIVDM,1,1,,A,\xff,0*00", 1, "not an AIS sentence"),
]


@pytest.mark.parametrize(("raw", "line", "reason"), BAD, ids=[b[2] for b in BAD])
def test_a_bad_line_refuses_the_whole_body_naming_it(raw, line, reason):
    with pytest.raises(InvalidInput) as refused:
        read_nmea(raw, POSITIONS, "ais")
    assert refused.value.code == codes.BAD_NMEA
    message = str(refused.value)
    assert f"at line {line}: " in message and reason in message.split(f"at line {line}: ")[1]


def test_a_stream_whose_fields_no_message_carries_is_refused():
    mixed = parse_schema({"fields": {"lat": "double", "destination": "string"}}, "m")[0]
    with pytest.raises(InvalidInput) as refused:
        read_nmea(body(REPORT), mixed, "mixed")
    assert refused.value.code == codes.NMEA_SCHEMA
    assert "stream 'mixed' takes no AIS message: its fields (destination, lat)" in str(
        refused.value
    )


def test_the_demo_traffic_decodes_to_ships_on_the_strait_lanes():
    traffic = Traffic(ships=30, seed=1)
    lines = traffic.tick(60) + traffic.voyages()
    positions = read_nmea(body(*lines), POSITIONS, "ais")
    voyages = read_nmea(body(*lines), VOYAGES, "voyages")
    assert [p["mmsi"] for p in positions] == [s.mmsi for s in traffic.ships]
    assert [v["mmsi"] for v in voyages] == [s.mmsi for s in traffic.ships]
    assert {v["destination"] for v in voyages} <= set(PORTS)
    assert {p["ts"] for p in positions} == {float(traffic.seconds)}
    lons = [x for lane in (EASTBOUND, WESTBOUND) for x, _ in lane]
    lats = [y for lane in (EASTBOUND, WESTBOUND) for _, y in lane]
    for p, ship in zip(positions, traffic.ships, strict=True):
        assert min(lons) <= p["lon"] <= max(lons) and min(lats) <= p["lat"] <= max(lats)
        assert 8 <= p["sog"] <= 16
        assert (0 < p["cog"] < 180) == (ship.lane is EASTBOUND)  # each lane one way


def test_ships_move_at_their_speed():
    traffic = Traffic(ships=5, seed=2)
    before = read_nmea(body(*traffic.tick(0)), POSITIONS, "ais")
    after = read_nmea(body(*traffic.tick(600)), POSITIONS, "ais")
    for a, b in zip(before, after, strict=True):
        dx = (b["lon"] - a["lon"]) * math.cos(math.radians(a["lat"]))
        km = math.hypot(dx, b["lat"] - a["lat"]) * 111.195
        assert km == pytest.approx(a["sog"] * 1.852 / 6, rel=0.05)  # 10 minutes


def test_the_company_feed_follows_the_papers_recipe():
    traffic = Traffic(ships=200, seed=3)
    routes = traffic.route_updates(share=0)
    heard = {s.mmsi for s in traffic.ships} & {r["mmsi"] for r in routes}
    assert len(heard) == pytest.approx(0.9 * len(traffic.ships), abs=15)  # 90% kept
    assert len(routes) - len(heard) == FAKE_PER_SHIP * len(traffic.ships)
    numbers = [int(r["company"][1:]) for r in routes]
    assert statistics.mean(numbers) == pytest.approx(30, abs=1)
    owned = traffic.ownership()
    assert sorted(m for ships in owned.values() for m in ships) == sorted(
        s.mmsi for s in traffic.ships
    )
    loads = {r["mmsi"]: r["free_load"] for r in routes}
    later = traffic.route_updates(share=0.5)
    assert all(0 < r["free_load"] <= loads[r["mmsi"]] for r in later)
    assert sum(r["free_load"] < loads[r["mmsi"]] for r in later) > len(later) // 4
    assert {r["next_leg"] for r in routes} == set(PORTS)


def test_a_seed_gives_the_same_traffic():
    assert Traffic(seed=5).tick(30) == Traffic(seed=5).tick(30)
    assert Traffic(seed=5).tick(30) != Traffic(seed=6).tick(30)
