"""The policy model (seed 002, section 4): Table 2 and Appendix B load to the same policies;
malformed policies and hostile XML are refused with POLICY_INVALID."""

from __future__ import annotations

import pytest

from boxes import codes
from boxes.errors import InvalidInput
from boxes.rewrite import load_policies
from boxes.rewrite.policy import AGGREGATE, FUNCTIONS, JOIN, READ, TimeConstraint, Window
from boxes.rewrite.xmlform import load_xml_policies
from tests.boxes.rewrite.assist import APPENDIX_B, METHODS, POLICIES


def test_table2_has_six_policies_for_three_roles():
    by_name = {p.name: p for p in POLICIES}
    assert [p.role for p in POLICIES] == ["port authority"] * 3 + ["ship company"] + [
        "ship captain"
    ] * 2
    count = by_name["port-count"]
    assert (count.privilege, count.functions) == (AGGREGATE, frozenset({"count"}))
    assert count.window == Window(600.0, 600.0)
    assert count.uncovered("AIS", {"SID"}) == [] and count.uncovered("AIS", {"SID", "Name"}) == [
        "Name"
    ]
    assert by_name["port-join"].privilege == JOIN
    assert by_name["port-join"].stream_names == ("AIS", "Route")
    near = by_name["captain-near"]
    assert near.uncovered("AIS", {"SID", "Long", "Lat"}) == []
    assert near.uncovered("AIS", {"Name", "Type"}) == ["Name", "Type"]
    assert by_name["captain-emergency"].during == TimeConstraint(
        "self.emergency_start", "self.emergency_end"
    )
    assert by_name["company-read"].privilege == READ


def test_appendix_b_xml_loads_the_same_shapes():
    policies = load_xml_policies(APPENDIX_B, METHODS)
    assert [(p.name, p.privilege) for p in policies] == [
        ("Port Authority#1", READ),
        ("Port Authority#2", AGGREGATE),
        ("Port Authority#3", JOIN),
        ("Ship Company#1", READ),
        ("Ship Captain#1", READ),
        ("Ship Captain#2", READ),
    ]
    port_agg = policies[1]
    assert port_agg.functions == frozenset(FUNCTIONS)  # "aggregate": all five (section 4)
    assert port_agg.window == Window(600.0, 600.0)
    assert policies[4].uncovered("AisGpsStream", {"MMSI", "Longitude", "Latitude"}) == []
    assert policies[4].uncovered("AisGpsStream", {"Emergency"}) == ["Emergency"]
    assert policies[5].during == TimeConstraint("self.Emergency_start", "self.Emergency_stop")
    assert policies[2].where is not None and "AisGpsStream.MMSI" in policies[2].where
    assert policies[3].where == "((AisGpsStream.MMSI) IN (self.ships))"


def _one(text: str) -> str:
    return "policies:\n  - " + text.strip().replace("\n", "\n    ")


BAD = {
    "no role": "name: a\nstreams: {AIS: '*'}\nprivilege: read",
    "bad privilege": "name: a\nrole: r\nstreams: {AIS: '*'}\nprivilege: write",
    "join on one stream": "name: a\nrole: r\nstreams: {AIS: '*'}\nprivilege: join",
    "read on two": "name: a\nrole: r\nstreams: {AIS: '*', R: '*'}\nprivilege: read",
    "bad attributes": "name: a\nrole: r\nstreams: {AIS: [1]}\nprivilege: read",
    "syntax": "name: a\nrole: r\nstreams: {AIS: '*'}\nwhere: 'v >'\nprivilege: read",
    "other stream": "name: a\nrole: r\nstreams: {AIS: '*'}\nwhere: 'R.v > 1'\nprivilege: read",
    "plain name in join": (
        "name: a\nrole: r\nstreams: {A: '*', B: '*'}\nwhere: 'v > 1'\nprivilege: join"
    ),
    "self path": "name: a\nrole: r\nstreams: {AIS: '*'}\nwhere: 'self.a.b'\nprivilege: read",
    "window on read": (
        "name: a\nrole: r\nstreams: {AIS: '*'}\nprivilege: read\nwindow: {size: 1m}"
    ),
    "stepped join": (
        "name: a\nrole: r\nstreams: {A: '*', B: '*'}\nprivilege: join\nwindow: {step: 1m}"
    ),
    "bad duration": "name: a\nrole: r\nstreams: {AIS: '*'}\nprivilege: count\nwindow: {size: 5}",
    "unknown key": "name: a\nrole: r\nstreams: {AIS: '*'}\nprivilege: read\ndeny: true",
    "bad during": "name: a\nrole: r\nstreams: {AIS: '*'}\nprivilege: read\nduring: {start: x}",
}


@pytest.mark.parametrize("text", BAD.values(), ids=BAD.keys())
def test_malformed_policies_are_refused(text):
    with pytest.raises(InvalidInput) as err:
        load_policies(_one(text))
    assert err.value.code == codes.POLICY_INVALID


@pytest.mark.parametrize(
    "text", ["[]", "policies: {}", "policies: [1]", "a: &x 1\nb: *x", "policies: ["]
)
def test_malformed_documents_are_refused(text):
    with pytest.raises(InvalidInput) as err:
        load_policies(text)
    assert err.value.code == codes.POLICY_INVALID


def test_duplicate_names_are_refused():
    item = "  - {name: a, role: r, streams: {AIS: '*'}, privilege: read}\n"
    with pytest.raises(InvalidInput, match="two policies"):
        load_policies("policies:\n" + item + item)


HOSTILE = {
    "billion laughs": """<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>
<root><role name="&lol2;"/></root>""",
    "external entity": """<?xml version="1.0"?>
<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><root><role name="&x;"/></root>""",
    "not xml": "<root><role>",
    "unknown method": """<root><role name="r"><policy><inputstream name="S" attributes="*"/>
<predicate><method name="Launch"/></predicate><privilege value="read"/></policy></role></root>""",
    "unknown element": """<root><role name="r"><policy><inputstream name="S" attributes="*"/>
<predicate><xor/></predicate><privilege value="read"/></policy></role></root>""",
    "no privilege": """<root><role name="r"><policy><inputstream name="S" attributes="*"/>
</policy></role></root>""",
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_or_unknown_xml_is_refused(text):
    with pytest.raises(InvalidInput) as err:
        load_xml_policies(text, METHODS)
    assert err.value.code == codes.POLICY_INVALID
