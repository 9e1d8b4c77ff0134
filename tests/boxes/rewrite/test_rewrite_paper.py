"""Every example of sections 5-6 of the ASSIST paper (seed 002), rewritten by the two passes
under Table 2's policies, with the result the paper's rules give."""

from __future__ import annotations

import pytest

from boxes import codes
from boxes.document import validate
from boxes.errors import Denied
from boxes.rewrite import Subject, load_policies, rewrite
from boxes.rewrite.xmlform import load_xml_policies
from tests.boxes.rewrite.assist import (
    APPENDIX_A,
    APPENDIX_B,
    APPENDIX_STREAMS,
    CAPTAIN,
    COMPANY,
    METHODS,
    POLICIES,
    PORT,
    diagram,
    plan_of,
)


def run(doc, subject, policies=POLICIES):
    return rewrite(doc, plan_of(doc), policies, subject)


def figure5():
    """Figure 5: ships bound for Los Angeles with at least 10 containers free (one hour)."""
    return diagram(
        {
            "j": {"type": "join", "left": "AIS", "right": "Route", "on": ["SID"], "within": "1h"},
            "la": {
                "type": "filter",
                "in": "j",
                "where": "next_leg = 'Los Angeles' AND free_load >= 10",
            },
        },
        {"out": {"from": "la"}},
        "AIS",
        "Route",
    )


def count_ships(size: str, slide: str):
    """Figure 6 (a): the number of ships per window."""
    return diagram(
        {
            "n": {
                "type": "aggregate",
                "in": "AIS",
                "window": {"size": size, "slide": slide},
                "aggregates": {"ships": "count()"},
            }
        },  # fmt: skip
        {"out": {"from": "n"}},
        "AIS",
    )


def positions():
    """The captain's query of Definition 2's example: ID and position of ships."""
    return diagram(
        {
            "pos": {
                "type": "map",
                "in": "AIS",
                "fields": {"SID": "SID", "Long": "Long", "Lat": "Lat"},
            }
        },
        {"out": {"from": "pos"}},
        "AIS",
    )


def test_secure_read_unites_the_captains_two_policies():
    """Definition 2's example: F = Distance <= 200 OR (T in [start(E), end(E)] AND E's ship)."""
    out = run(positions(), CAPTAIN)
    [read, projection] = out.added
    assert read["operator"] == "secure read" and read["after"] == "AIS"
    assert read["policies"] == ["captain-near", "captain-emergency"]
    where = read["where"]
    assert "sqrt(power(Long - 103.8, 2) + power(Lat - 1.2, 2)) * 60 <= 200" in where
    assert "SID IN (563009)" in where
    assert (
        "T BETWEEN (TIMESTAMP '2013-02-01 10:00:00') AND (TIMESTAMP '2013-02-01 12:00:00')" in where
    )
    assert " OR " in where
    # the filter then a projection to what the query uses, right after the input
    assert projection == {"operator": "projection", "type": "map", "box": "AIS_granted",
                          "after": "AIS", "fields": ["SID", "Long", "Lat", "T"]}  # fmt: skip
    boxes = out.document["boxes"]
    assert boxes["AIS_secure"] == {"type": "filter", "in": "AIS", "where": where}
    assert boxes["AIS_granted"]["in"] == "AIS_secure"
    assert boxes["pos"]["in"] == "AIS_granted"
    assert out.plan.outputs == plan_of(positions()).outputs


def test_an_attribute_outside_a_policy_leaves_only_the_other():
    """The captain reading ship names: captain-near covers SID, Long, Lat only."""
    doc = diagram(
        {"names": {"type": "map", "in": "AIS", "fields": {"Name": "Name"}}},
        {"out": {"from": "names"}},
        "AIS",
    )
    out = run(doc, CAPTAIN)
    assert out.added[0]["policies"] == ["captain-emergency"]
    assert {
        "policy": "captain-near",
        "reason": "the query uses AIS.Name, which it does not cover",
    } in out.skipped


def test_ship_company_reads_its_own_ships():
    out = run(positions(), COMPANY)
    assert out.added[0]["where"] == "SID IN (563001, 563002)"


def test_secure_join_figure_10():
    """Section 5.3's second example: the join policy's predicate is attached after the join;
    AIS's read (port-read) is pushed down and dropped, since Route has no read policy."""
    out = run(figure5(), PORT)
    [join] = out.added
    assert join["operator"] == "secure join" and join["after"] == "j"
    assert join["policies"] == ["port-join"]
    assert join["where"] == (
        "SID = SID AND Long BETWEEN 103.6 AND 104.1 AND Lat BETWEEN 1.15 AND 1.35"
    )
    boxes = out.document["boxes"]
    assert boxes["la"]["in"] == "j_secure" and boxes["j_secure"]["in"] == "j"
    assert boxes["j"]["within"] == "1h"  # "the window values ... keep unchanged"
    assert set(boxes) == {"j", "la", "j_secure"}


def test_secure_join_merges_reads_on_both_sides():
    """Algorithm 3, lines 13-14: with reads on both sides, (read AND read) OR join."""
    extra = [*POLICIES, *_route_read()]
    out = run(figure5(), PORT, extra)
    [join] = out.added
    assert join["policies"] == ["port-read", "port-route", "port-join"]
    assert join["where"] == (
        "((Long BETWEEN 103.6 AND 104.1 AND Lat BETWEEN 1.15 AND 1.35) AND (free_load < 100))"
        " OR (SID = SID AND Long BETWEEN 103.6 AND 104.1 AND Lat BETWEEN 1.15 AND 1.35)"
    )
    assert set(out.document["boxes"]) == {"j", "la", "j_secure"}  # no read at either source


def _route_read():
    from boxes.rewrite import load_policies

    return load_policies(
        "policies: [{name: port-route, role: port authority, streams: {Route: '*'}, "
        "where: 'free_load < 100', privilege: read}]"
    )


@pytest.mark.parametrize(
    ("size", "slide", "widened"),
    [
        ("1h", "10m", None),  # Figures 6-8: kept, the policy asks 10 min / 10 min
        ("30m", "5m", {"size": "1800s", "slide": "600s"}),  # Definition 4's example
        ("5m", "5m", {"size": "600s", "slide": "600s"}),
    ],
)
def test_secure_aggregate_figure_8(size, slide, widened):
    """port-read (pushed down) OR port-count, before the count; the window widened to the
    policy's minimum size and step."""
    out = run(count_ships(size, slide), PORT)
    secure = out.added[0]
    assert secure["operator"] == "secure aggregate" and secure["box"] == "n_secure"
    assert secure["policies"] == ["port-read", "port-count"]
    assert secure["where"] == (
        "(Long BETWEEN 103.6 AND 104.1 AND Lat BETWEEN 1.15 AND 1.35) OR "
        "(sqrt(power(Long - 103.85, 2) + power(Lat - 1.25, 2)) * 60 <= 50)"
    )
    boxes = out.document["boxes"]
    assert boxes["n"]["in"] == "n_secure" and boxes["n_secure"]["in"] == "AIS"
    if widened is None:
        assert len(out.added) == 1 and boxes["n"]["window"] == {"size": size, "slide": slide}
    else:
        assert out.added[1]["window"] == {"from": {"size": _s(size), "slide": _s(slide)},
                                          "to": widened}  # fmt: skip
        assert boxes["n"]["window"] == widened
        agg = next(b for b in out.plan.boxes if b.name == "n")
        assert (agg.size, agg.slide) >= (600, 600)


def _s(text: str) -> str:
    return f"{int(text[:-1]) * 60}s"


def test_an_aggregate_the_policy_does_not_grant_runs_on_read_tuples():
    """avg is not port-count's privilege: the read applies at the source, the window stays."""
    doc = diagram(
        {
            "n": {
                "type": "aggregate",
                "in": "AIS",
                "window": {"size": "5m"},
                "aggregates": {"lat": "avg(Lat)"},
            }
        },  # fmt: skip
        {"out": {"from": "n"}},
        "AIS",
    )
    out = run(doc, PORT)
    [read, projection] = out.added
    assert read["operator"] == "secure read" and read["policies"] == ["port-read"]
    assert projection["fields"] == ["Lat", "T"]
    assert out.document["boxes"]["n"]["window"] == {"size": "5m"}


@pytest.mark.parametrize(
    ("subject", "doc", "stream"),
    [
        (COMPANY, "figure5", "Route"),  # the company has no policy on Route
        (CAPTAIN, "figure5", "Route"),
        (Subject(frozenset({"pirate"})), "positions", "AIS"),  # deny by default
        (Subject(frozenset({"ship company"})), "positions", "AIS"),  # no self.ships
    ],
)
def test_a_denied_query_names_the_stream(subject, doc, stream):
    document = figure5() if doc == "figure5" else positions()
    with pytest.raises(Denied) as err:
        run(document, subject)
    assert err.value.code == codes.REWRITE_DENIED
    assert err.value.details["stream"] == stream
    assert repr(stream) in err.value.message


def test_a_denial_names_the_attributes_no_policy_covers():
    """The company's policy covers every attribute but its name says nothing of a stream
    read with attributes a narrower policy leaves out: the denial says which."""
    [narrow] = load_policies("""
policies:
  - {name: positions-only, role: pilot, streams: {AIS: [SID, Long, Lat]}, privilege: read}
""")
    doc = diagram(
        {
            "named": {
                "type": "map",
                "in": "AIS",
                "fields": {"SID": "SID", "Name": "Name", "Type": "Type"},
            }
        },
        {"out": {"from": "named"}},
        "AIS",
    )
    with pytest.raises(Denied) as err:
        rewrite(doc, plan_of(doc), [narrow], Subject(frozenset({"pilot"})))
    assert err.value.details["skipped"] == [
        {
            "policy": "positions-only",
            "reason": "the query uses AIS.Name, AIS.Type, which it does not cover",
        }
    ]
    assert err.value.message.endswith(
        "as this diagram does: 'positions-only': the query uses AIS.Name, AIS.Type, which it does "
        "not cover"
    )
    none = Subject(frozenset({"pirate"}))
    with pytest.raises(Denied) as err:
        rewrite(doc, plan_of(doc), [narrow], none)
    assert err.value.message.endswith(": you have no policy on it")


def test_a_missing_subject_attribute_is_reported_as_skipped():
    with pytest.raises(Denied) as err:
        run(positions(), Subject(frozenset({"ship company"})))
    assert err.value.details["skipped"] == [
        {"policy": "company-read", "reason": "the subject has no attribute 'ships'"}
    ]


def test_the_captain_may_not_count_ships_by_type_without_reads():
    """No aggregate privilege, but the reads authorize AIS: the count runs on read tuples."""
    doc = diagram(
        {
            "n": {
                "type": "aggregate",
                "in": "AIS",
                "window": {"size": "1h"},
                "group_by": ["Type"],
                "aggregates": {"ships": "count()"},
            }
        },  # fmt: skip
        {"out": {"from": "n"}},
        "AIS",
    )
    out = run(doc, CAPTAIN)
    assert out.added[0]["policies"] == ["captain-emergency"]  # near does not cover Type


def test_appendix_a_query_under_appendix_b_policies():
    policies = load_xml_policies(APPENDIX_B, METHODS)
    plan = validate(APPENDIX_A, streams=APPENDIX_STREAMS)
    port = Subject(frozenset({"Port Authority"}), PORT.attributes)
    out = rewrite(APPENDIX_A, plan, policies, port)
    [join] = out.added
    assert join["policies"] == ["Port Authority#3"]
    assert join["where"] == (
        "((MMSI) = (MMSI)) AND (((Longitude) BETWEEN 103.6 AND 104.1 "
        "AND (Latitude) BETWEEN 1.15 AND 1.35))"
    )
    company = Subject(frozenset({"Ship Company"}), {"ships": [1]})
    with pytest.raises(Denied) as err:
        rewrite(APPENDIX_A, plan, policies, company)
    assert err.value.details["stream"] == "RouteStream"


def test_rewriting_is_pure():
    doc = figure5()
    before = repr(doc)
    first = run(doc, PORT)
    assert repr(doc) == before
    assert run(doc, PORT) == first


def test_a_map_needs_every_field_it_computes():
    """The count below reads none of the map's fields, yet the map computes Name: the
    captain's near policy (no Name) cannot apply, and the projection keeps Name."""
    doc = diagram(
        {
            "m": {"type": "map", "in": "AIS", "fields": {"T": "T", "n": "upper(Name)"}},
            "c": {
                "type": "aggregate",
                "in": "m",
                "window": {"size": "1h"},
                "aggregates": {"ships": "count()"},
            },  # fmt: skip
        },
        {"out": {"from": "c"}},
        "AIS",
    )
    out = run(doc, CAPTAIN)
    assert out.added[0]["policies"] == ["captain-emergency"]
    assert out.added[1]["fields"] == ["Name", "T"]


def test_a_read_is_applied_on_every_branch_that_does_not_merge_it():
    """AIS feeds Figure 5's join (whose policy absorbs the read) and a second output: the
    read is applied on the second branch only."""
    doc = figure5()
    doc["boxes"]["near"] = {"type": "filter", "in": "AIS", "where": "Type = 'tanker'"}
    doc["outputs"]["tankers"] = {"from": "near"}
    out = run(doc, PORT)
    boxes = out.document["boxes"]
    assert boxes["near"]["in"] == "AIS_secure"
    assert boxes["j"]["left"] == "AIS"  # merged into the join's condition, not applied here
    assert [a["operator"] for a in out.added] == ["secure read", "secure join"]


def test_reads_are_applied_before_a_union():
    extra = [*POLICIES, *_route_read()]
    doc = diagram(
        {
            "a": {"type": "map", "in": "AIS", "fields": {"SID": "SID", "T": "T"}},
            "r": {"type": "map", "in": "Route", "fields": {"SID": "SID", "T": "T"}},
            "u": {"type": "union", "in": ["a", "r"]},
        },
        {"out": {"from": "u"}},
        "AIS",
        "Route",
    )
    out = run(doc, PORT, extra)
    boxes = out.document["boxes"]
    assert boxes["a"]["in"] == "AIS_granted" and boxes["AIS_granted"]["in"] == "AIS_secure"
    assert boxes["r"]["in"] == "Route_granted" and boxes["Route_granted"]["in"] == "Route_secure"
    assert boxes["Route_secure"]["where"] == "free_load < 100"


def _policy(text: str):
    from boxes.rewrite import load_policies

    return load_policies("policies:\n  - " + text)


def test_a_join_policy_window_widens_the_join_bound():
    """Definition 3: |W|' = max(|W|, P.W.size); Sluice's join is bounded by 'within'."""
    wide = _policy(
        "{name: wide, role: port authority, streams: {AIS: '*', Route: '*'}, "
        "where: 'AIS.SID = Route.SID', privilege: join, window: {size: 2h}}"
    )
    out = run(figure5(), PORT, wide)
    assert out.document["boxes"]["j"]["within"] == "7200s"
    assert {"operator": "secure join", "box": "j", "policies": ["wide"],
            "within": {"from": "3600s", "to": "7200s"}} in out.added  # fmt: skip
    join = next(b for b in out.plan.boxes if b.name == "j")
    assert join.within == 7200


def test_an_aggregate_policy_must_grant_every_function_of_the_box():
    doc = diagram(
        {
            "n": {
                "type": "aggregate",
                "in": "AIS",
                "window": {"size": "1h"},
                "aggregates": {"ships": "count()", "west": "min(Long)"},
            }
        },  # fmt: skip
        {"out": {"from": "n"}},
        "AIS",
    )
    only_count = _policy(
        "{name: c, role: r, streams: {AIS: '*'}, privilege: count, window: {size: 2h}}"
    )
    with pytest.raises(Denied) as err:
        run(doc, Subject(frozenset({"r"})), only_count)
    assert err.value.details["skipped"] == [
        {"policy": "c", "reason": "'n' computes min, which the policy does not grant"}
    ]
    both = _policy(
        "{name: cm, role: r, streams: {AIS: '*'}, privilege: [count, min], window: {size: 2h}}"
    )
    out = run(doc, Subject(frozenset({"r"})), both)
    # S' = max(S, P.step): the one-hour slide stays (Definition 4)
    assert out.document["boxes"]["n"]["window"] == {"size": "7200s", "slide": "3600s"}


def test_aggregate_policies_do_not_apply_to_count_windows():
    doc = diagram(
        {
            "n": {
                "type": "aggregate",
                "in": "AIS",
                "window": {"rows": 10},
                "aggregates": {"ships": "count()"},
            }
        },  # fmt: skip
        {"out": {"from": "n"}},
        "AIS",
    )
    policy = _policy("{name: c, role: r, streams: {AIS: '*'}, privilege: count}")
    with pytest.raises(Denied) as err:
        run(doc, Subject(frozenset({"r"})), policy)
    assert err.value.details["skipped"] == [
        {"policy": "c", "reason": "'n' counts rows; a policy's window bounds time"}
    ]


def test_a_subject_attribute_is_a_literal_never_code():
    """An attribute holding quotes, a comment or a field name stays one text literal."""
    policy = _policy("{name: n, role: r, streams: {AIS: '*'}, where: 'Name = self.ship', "
                     "privilege: read}")  # fmt: skip
    hostile = "O'Brien' OR TRUE -- ; Lat"
    out = run(positions(), Subject(frozenset({"r"}), {"ship": hostile}), policy)
    assert out.added[0]["where"] == "Name = 'O''Brien'' OR TRUE -- ; Lat'"
    secure = next(b for b in out.plan.boxes if b.name == "AIS_secure")
    assert secure.where.fields == {"Name"}


def test_a_plan_at_a_level_keeps_its_clearance():
    from dataclasses import replace

    doc = {**positions(), "level": {"banks": "T"}}
    plan = replace(plan_of(doc), clearance=1)
    out = rewrite(doc, plan, POLICIES, COMPANY)
    assert out.plan.level == {"banks": "T"} and out.plan.clearance == 1
