"""ASSIST policies and user attributes in the catalog: administrators only, all or none,
audited with old and new values, seen by the snapshot (ours and another process's)."""

from __future__ import annotations

import json

import pytest

from boxes.errors import Conflict, Denied, InvalidInput, NotFound
from boxes.rewrite import load_policies
from catalog import Catalog

PORT = {
    "name": "port-read",
    "role": "PORT",
    "streams": {"ais": "*"},
    "where": "point_in_box(lon, lat, self.west, self.south, self.east, self.north)",
    "privilege": "read",
}
COUNT = {
    "name": "port-count",
    "role": "PORT",
    "streams": {"ais": ["mmsi"]},
    "privilege": ["count", "max"],
    "window": {"size": "10m", "step": "5m"},
}


@pytest.fixture
def port(cat, admin, people):
    people({"pa": ["PORT"], "sc": ["SHIPCO"]})
    fields = {"t": "timestamp", "mmsi": "long", "lon": "double", "lat": "double"}
    cat.objects.add_schema(admin, "pos", {"fields": fields, "event_time": "t"})
    cat.objects.add_stream(admin, "ais", "pos")
    cat.objects.add_schema(
        admin, "port", {"fields": {"t": "timestamp", "mmsi": "long"}, "event_time": "t"}
    )
    cat.objects.add_stream(admin, "calls", "port")


def test_policies_round_trip_in_their_canonical_form(cat, admin, port):
    assert cat.policies.put(admin, [PORT, COUNT]) == ["port-read", "port-count"]
    listed = cat.policies.all(admin)
    assert [p["name"] for p in listed] == ["port-count", "port-read"]
    assert listed[0]["window"] == {"size": "600.0s", "step": "300.0s"}
    assert listed[0]["privilege"] == ["count", "max"]
    # the canonical form loads to the very policies stored
    assert tuple(load_policies(json.dumps({"policies": listed}))) == cat.core.snapshot.policies


def test_adding_is_all_or_none(cat, admin, port):
    cat.policies.put(admin, [PORT])
    before = cat.core.snapshot
    with pytest.raises(Conflict) as err:
        cat.policies.put(admin, [COUNT, PORT])
    assert err.value.code == "DUPLICATE_NAME"
    assert cat.core.snapshot is before and [p.name for p in before.policies] == ["port-read"]
    with pytest.raises(NotFound) as err:
        cat.policies.put(admin, [{**COUNT, "role": "NOBODY"}])
    assert err.value.code == "UNKNOWN_ROLE"
    with pytest.raises(InvalidInput) as err:
        cat.policies.put(admin, [{**COUNT, "privilege": "write"}])
    assert err.value.code == "POLICY_INVALID"
    assert cat.core.snapshot is before


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"streams": {"nowhere": "*"}}, "there is no input stream 'nowhere'"),
        ({"streams": {"ais": ["mmsi", "speed"]}}, "'ais' has no field 'speed'"),
        ({"where": "speed > 3"}, "speed"),
        ({"where": "reflect(System.exit)"}, "names no stream"),
        ({"where": "java_method('java.lang.System', 'exit', 1)"}, "java_method() is forbidden"),
        ({"where": "1) OR (1=1"}, "unexpected ')'"),
        ({"where": "mmsi + self.x"}, "must be boolean"),
        ({"where": "mmsi IN (self.ships) AND lat LIKE 3"}, "LIKE"),
        ({"during": {"start": "self.s", "end": "lat"}}, "BETWEEN"),
    ],
)
def test_a_policy_must_hold_over_its_streams_or_nothing_is_stored(cat, admin, port, change, reason):
    """Fields, predicates and time bounds are checked against the stream's schema when a
    policy is added, with its functions allow-listed, not first at a deploy."""
    before = cat.core.snapshot
    with pytest.raises(InvalidInput) as err:
        cat.policies.put(admin, [COUNT, {**PORT, **change}])
    assert (err.value.code, err.value.details["policy"]) == ("POLICY_INVALID", "port-read")
    assert reason in str(err.value), str(err.value)
    assert cat.core.snapshot is before


def test_join_policies_and_time_bounds_are_checked_over_both_streams(cat, admin, port):
    join = {
        "name": "calls",
        "role": "PORT",
        "streams": {"ais": "*", "calls": ["mmsi"]},
        "where": "ais.mmsi = calls.mmsi AND ais.lat > self.south",
        "privilege": "join",
        "during": {"start": "timestamp_seconds(self.em_start)", "end": "self.em_end"},
    }
    assert cat.policies.put(admin, [join]) == ["calls"]
    with pytest.raises(InvalidInput) as err:
        cat.policies.put(admin, [{**join, "name": "bad", "where": "ais.mmsi = calls.lat"}])
    assert "calls__lat" in str(err.value)


def test_replace_and_delete_are_audited_with_old_and_new(cat, admin, port):
    cat.policies.put(admin, [PORT])
    changed = {**PORT, "where": "lat > 1.0"}
    cat.policies.put(admin, [changed], replace=True)
    assert cat.core.snapshot.policies[0].where == "lat > 1.0"
    cat.policies.delete(admin, "port-read")
    assert cat.core.snapshot.policies == ()
    with pytest.raises(NotFound):
        cat.policies.delete(admin, "port-read")
    entries = cat.audit(admin, event="policies")
    assert [(e.details["old"] or {}).get("where") for e in entries] == [
        "lat > 1.0",
        PORT["where"],
        None,
    ]
    assert entries[1].details["new"]["where"] == "lat > 1.0" and entries[0].details["new"] is None


def test_attributes_are_checked_replaced_and_audited(cat, admin, port):
    values = {"west": 103.6, "south": 1.1, "east": 104.1, "north": 1.4, "ships": [1, 2]}
    assert cat.policies.set_attributes(admin, "pa", values) == values
    user = cat.core.snapshot.users_by_name["pa"]
    assert dict(cat.core.snapshot.attributes[user.id]) == values
    assert cat.policies.attributes(admin, "pa") == values
    cat.policies.set_attributes(admin, "pa", {"ships": [3]})
    assert cat.policies.attributes(admin, "pa") == {"ships": [3]}
    for bad in ({"x": {"a": 1}}, {"x": [[1]]}, {"x": float("nan")}, {"1x": 1}, {"x": None}):
        with pytest.raises(InvalidInput) as err:
            cat.policies.set_attributes(admin, "pa", bad)
        assert err.value.code == "ATTRIBUTE_INVALID"
    with pytest.raises(NotFound):
        cat.policies.set_attributes(admin, "nobody", {})
    [last, first] = cat.audit(admin, event="policies")
    assert (last.details["old"], last.details["new"]) == (values, {"ships": [3]})
    assert first.object == "user:pa"
    cat.accounts.delete_user(admin, "pa")
    assert user.id not in cat.core.snapshot.attributes


def test_only_administrators(cat, admin, port, login):
    pa = login("pa")
    for attempt in (
        lambda: cat.policies.put(pa, [PORT]),
        lambda: cat.policies.all(pa),
        lambda: cat.policies.delete(pa, "port-read"),
        lambda: cat.policies.set_attributes(pa, "pa", {"ships": [1]}),
        lambda: cat.policies.attributes(pa, "pa"),
    ):
        with pytest.raises(Denied):
            attempt()
    assert cat.core.snapshot.policies == () and not cat.core.snapshot.attributes


def test_another_process_sees_the_change(cat, admin, port, db_url):
    other = Catalog.open(db_url, bcrypt_rounds=4)
    try:
        other.core.snapshot  # noqa: B018 - loaded before the change
        cat.policies.put(admin, [PORT])
        cat.policies.set_attributes(admin, "pa", {"ships": [7]})
        other.core.store.settle()  # PostgreSQL's notice (SQLite's is there at once)
        snapshot = other.core.snapshot
        assert [p.name for p in snapshot.policies] == ["port-read"]
        assert list(snapshot.attributes.values()) == [{"ships": [7]}]
    finally:
        other.close()
