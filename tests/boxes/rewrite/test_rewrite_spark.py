"""The rewritten paper queries run on Spark and deliver what the policies grant (seed 002)."""

from __future__ import annotations

import datetime as dt

from boxes.compiler import compile_plan
from boxes.rewrite import Subject, load_policies, rewrite
from tests.boxes.conftest import collect, frames
from tests.boxes.rewrite.assist import POLICIES, PORT, diagram, plan_of
from tests.boxes.rewrite.test_rewrite_paper import count_ships, figure5

T = dt.datetime(2013, 2, 1, 10, 0, tzinfo=dt.timezone.utc)


def ship(sid, lon, lat, minute, kind="cargo"):
    return {"SID": sid, "Name": f"ship{sid}", "Type": kind, "Long": lon, "Lat": lat,
            "T": T + dt.timedelta(minutes=minute)}  # fmt: skip


AIS_ROWS = [
    ship(1, 103.8, 1.25, 0),  # in the port
    ship(2, 103.9, 1.30, 1),  # in the port
    ship(3, 104.5, 1.25, 2),  # 39 miles east: outside the port, within 50 miles
    ship(4, 106.0, 3.00, 3),  # far away
]
ROUTE_ROWS = [
    {
        "SID": sid,
        "next_leg": leg,
        "free_load": load,
        "ETA": T + dt.timedelta(days=9),
        "T": T + dt.timedelta(minutes=5),
    }  # fmt: skip
    for sid, leg, load in (
        (1, "Los Angeles", 20),
        (2, "Rotterdam", 50),
        (3, "Los Angeles", 30),
        (4, "Los Angeles", 40),
    )  # fmt: skip
]


def run(spark, plan):
    data = {"AIS": AIS_ROWS, "Route": ROUTE_ROWS}
    outputs = compile_plan(plan, frames(spark, plan, {n: data[n] for n in plan.inputs}))
    return [row for row, _ in collect(plan, outputs["out"])]


def test_figure_10_delivers_only_ships_in_the_port(spark):
    doc = figure5()
    original = run(spark, plan_of(doc))
    assert sorted(r["SID"] for r in original) == [1, 3, 4]  # post-filtering's input
    rewritten = run(spark, rewrite(doc, plan_of(doc), POLICIES, PORT).plan)
    assert [(r["SID"], r["next_leg"], r["free_load"]) for r in rewritten] == [
        (1, "Los Angeles", 20)
    ]


def test_figure_8_counts_ships_in_the_port_or_within_50_miles(spark):
    doc = count_ships("1h", "1h")
    assert [r["ships"] for r in run(spark, plan_of(doc))] == [4]
    rewritten = run(spark, rewrite(doc, plan_of(doc), POLICIES, PORT).plan)
    assert [r["ships"] for r in rewritten] == [3]  # ships 1 and 2 in the port, 3 within 50


def test_a_during_bound_from_the_users_attributes(spark):
    """A time constraint read from the user's attributes, as the API stores them (JSON numbers:
    seconds since the epoch), keeps the tuples of that period only (docs/rewrite.md)."""
    [policy] = load_policies("""
policies:
  - name: emergency
    role: coast guard
    streams: {AIS: "*"}
    privilege: read
    during: {start: timestamp_seconds(self.em_start), end: timestamp_seconds(self.em_end)}
""")
    start = int((T + dt.timedelta(minutes=1)).timestamp())
    guard = Subject(frozenset({"coast guard"}), {"em_start": start, "em_end": start + 60})
    doc = diagram(
        {"f": {"type": "filter", "in": "AIS", "where": "SID > 0"}}, {"out": {"from": "f"}}, "AIS"
    )
    rewritten = run(spark, rewrite(doc, plan_of(doc), [policy], guard).plan)
    assert sorted(r["SID"] for r in rewritten) == [2, 3]  # minutes 1 and 2
