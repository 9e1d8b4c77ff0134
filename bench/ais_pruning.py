"""Seed 002's Experiment 1: tuples passed by the rewritten plan vs post-filtering, same feed.

The feed is the demo's (``server/cli/ais_demo.py``, the paper's section 7 recipe): ships on
the Singapore Strait's lanes reporting every 10 s of feed time as real ``!AIVDM`` sentences,
decoded by the ingestion's NMEA reader, and the companies' Route feed every 5 minutes (90% of
the AIS ships plus ten times as many unheard ones). The query is Figure 5's shape: the port
authority joins positions with routes on ``mmsi`` (within 5 minutes) and keeps ships with at
least 10 free containers. Table 2's third policy (a join policy: the ship is in the port's
waters, ``self``'s box) authorizes it.

Post-filtering runs the original plan and hands every output tuple to a filter applying the
policy afterwards; the rewritten plan (``boxes.rewrite``) passes only what the policy grants.
Each repetition is one seed's traffic; the rows count output tuples (the paper's measure), and
a repetition checks that post-filtering the original's output gives exactly the rewritten
plan's tuples. The port's waters are a box of about 12 km of the strait's 115 km of lanes
(10.5% of their length), and the ratio is one over the share of joined positions inside it:
the policy's selectivity, which the feed's geometry sets, not the engine; a second case
uses the box of the live scenario and the map test (0.2 by 0.1 degrees, the eastbound lane
partly south of it), to show how the ratio follows the port's shape.
"""

from __future__ import annotations

import datetime as dt
import statistics

from bench import spark_batch
from bench.harness import Comparison, Mode
from bench.report import Goal, Result, Row
from boxes.compiler import compile_plan
from boxes.document import validate
from boxes.labels import LABEL_COLUMN
from boxes.rewrite import Subject, load_policies, rewrite
from boxes.types import parse_schema
from server.cli.ais_demo import Traffic
from server.cli.demo import AIS_SCHEMAS
from server.ingest.nmea import read_nmea

NAME = "AIS pruning (002 Exp. 1)"
GOAL = 10.0  # at least 10x fewer tuples than post-filtering
REPORT_EVERY, ROUTES_EVERY = 10, 300  # seconds of feed time
# The port of Singapore's waters (the demo's SINGAPORE port sits in it): west, south, east,
# north; and the box of tests/server/scenarios/test_policies_scenario.py and the map's web test.
PORTS = {
    "port waters": {"west": 103.78, "south": 1.15, "east": 103.89, "north": 1.30},
    "scenario's box": {"west": 103.7, "south": 1.2, "east": 103.9, "north": 1.3},
}
POLICIES = load_policies("""
policies:
  - name: port-join
    role: port authority
    streams: {ais: "*", routes: "*"}
    where: "ais.mmsi = routes.mmsi
            AND point_in_box(ais.lon, ais.lat, self.west, self.south, self.east, self.north)"
    privilege: join
""")
DOCUMENT = {
    "version": 1,
    "name": "figure5",
    "inputs": {"ais": {}, "routes": {}},
    "boxes": {
        "j": {"type": "join", "left": "ais", "right": "routes", "on": ["mmsi"], "within": "5m"},
        "free": {"type": "filter", "in": "j", "where": "free_load >= 10"},
    },
    "outputs": {"out": {"from": "free"}},
}
SCHEMAS = {
    stream: parse_schema(AIS_SCHEMAS[schema], schema)[0]
    for stream, schema in (("ais", "ais_position"), ("routes", "route"))
}


def feed(seed: int, ships: int, minutes: int) -> dict[str, list[tuple]]:
    """One seed's traffic: positions decoded from their NMEA sentences, and the Route feed."""
    traffic = Traffic(ships=ships, seed=seed)
    positions, routes = [], []
    for second in range(0, minutes * 60, REPORT_EVERY):
        if second % ROUTES_EVERY == 0:
            routes += traffic.route_updates()
        raw = "\n".join(traffic.tick(REPORT_EVERY)).encode()
        positions += read_nmea(raw, SCHEMAS["ais"], "ais")
    return {"ais": _rows(positions, SCHEMAS["ais"]), "routes": _rows(routes, SCHEMAS["routes"])}


def _rows(records: list[dict], schema) -> list[tuple]:
    time = schema.event_time
    return [
        tuple(
            dt.datetime.fromtimestamp(r[n], dt.timezone.utc) if n == time else r[n]
            for n in schema.names
        )
        for r in records
    ]


def in_port(row: dict, port: dict) -> bool:
    """The policy's predicate, applied after the original plan (post-filtering); the join
    keeps ``lon`` and ``lat`` unprefixed (only the AIS side has them)."""
    return (
        port["west"] <= row["lon"] <= port["east"] and port["south"] <= row["lat"] <= port["north"]
    )


def outputs(spark, plan, data) -> list[dict]:
    frames = {
        name: spark.createDataFrame(data[name], schema=SCHEMAS[name].spark_type())
        for name in plan.inputs
    }
    (frame,) = compile_plan(plan, frames).values()
    return frame.drop(LABEL_COLUMN).toArrow().to_pylist()


def run(mode: Mode) -> Result:
    spark = spark_batch.session()
    seeds, ships = mode.pick(3, 9, least=1), 80  # one feed shape, more seeds
    minutes = mode.pick(60, 60, least=10)
    plan = validate(DOCUMENT, streams=SCHEMAS)
    feeds = [feed(seed, ships, minutes) for seed in range(seeds)]
    inputs = statistics.median(len(f["ais"]) + len(f["routes"]) for f in feeds)
    originals = [outputs(spark, plan, data) for data in feeds]
    result = Result()
    for case, port in PORTS.items():
        rewritten = rewrite(DOCUMENT, plan, POLICIES, Subject(frozenset({"port authority"}), port))
        pruned_counts = []
        for seed, (data, original) in enumerate(zip(feeds, originals, strict=True)):
            pruned = outputs(spark, rewritten.plan, data)
            post_filtered = [r for r in original if in_port(r, port)]
            if _bag(post_filtered) != _bag(pruned):
                raise AssertionError(f"seed {seed}: post-filtering and the rewrite differ")
            pruned_counts.append(len(pruned))
        c = Comparison(tuple(map(float, pruned_counts)), tuple(float(len(o)) for o in originals))
        lo, hi = c.spread
        fewer = 1 / c.ratio
        name = f"{case} ({port['east'] - port['west']:.2f} deg), {ships} ships, {minutes} min"
        result.rows.append(
            Row(
                NAME,
                f"{name}, {inputs:,.0f} tuples in: output tuples",
                "tuples",
                c.secured_median,
                c.unsecured_median,
                c,
            )
        )
        result.goals.append(
            Goal(
                NAME,
                f"{case}: rewritten passes >= {GOAL:.0f}x fewer than post-filtering",
                f"{fewer:.1f}x fewer [{1 / hi:.1f}x, {1 / lo:.1f}x]",
                fewer >= GOAL,
            )
        )
        result.extra[case] = {
            "port": port,
            "original": [len(o) for o in originals],
            "rewritten": pruned_counts,
            "added": list(rewritten.added),
        }
    return result


def _bag(rows: list[dict]) -> list[tuple]:
    return sorted(tuple(sorted(r.items())) for r in rows)
