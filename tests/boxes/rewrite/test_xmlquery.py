"""The paper's XML query form (seed 002, Appendix A) compiles to a diagram document that
validates, rewrites and refuses like one written by hand."""

from __future__ import annotations

import pytest

from boxes.document import validate
from boxes.errors import DiagramInvalid
from boxes.rewrite import Subject, rewrite
from boxes.rewrite.xmlform import load_xml_policies
from boxes.rewrite.xmlquery import query_document
from tests.boxes.rewrite.assist import APPENDIX_B, APPENDIX_STREAMS, METHODS, PORT

# Appendix A as printed: the join's predicate follows it (a page break in the report).
APPENDIX_A_XML = """<root>
  <query>
    <inputstream name="AisGpsStream">
      <outputstream name="Source.0.out" />
      <attribute name="MMSI" />
      <attribute name="Longitude" />
      <attribute name="Latitude" />
    </inputstream>
    <inputstream name="RouteStream">
      <outputstream name="Source.1.out" />
      <attribute name="MMSI" />
      <attribute name="Next_leg" />
      <attribute name="Free_load" />
    </inputstream>
    <join name="Join.0">
      <inputstream name="Source.0.out" />
      <inputstream name="Source.1.out" />
      <outputstream name="Join.0.out" />
      <attribute name="MMSI">
        <input name="MMSI" inputstream="Source.0.out" />
      </attribute>
      <attribute name="Free_load">
        <input name="Free_load" inputstream="Source.1.out" />
      </attribute>
      <attribute name="Next_leg">
        <input name="Next_leg" inputstream="Source.1.out" />
      </attribute>
    </join>
    <predicate>
      <equals>
        <attribute name="MMSI" inputstream="Source.0.out" />
        <attribute name="MMSI" inputstream="Source.1.out" />
      </equals>
    </predicate>
    <filter name="Filter.0">
      <inputstream name="Join.0.out" />
      <outputstream name="Filter.0.out" />
      <predicate>
        <bool_and>
          <equals>
            <attribute name="Next_leg" inputstream="Join.0.out" />
            <litteral type="System.String" value="Los Angeles" />
          </equals>
          <greater_than>
        <attribute name="Free_load" inputstream="Join.0.out" />
        <litteral type="System.Int64" value="10" />
    </greater_than>
</bool_and>
</predicate>
</filter>
<outputstream name="OutputAdapter">
    <inputstream name="Filter.0.out" />
</outputstream>
</query>
</root>"""


def schemas(names):
    return {n: APPENDIX_STREAMS[n] for n in names if n in APPENDIX_STREAMS}


def test_appendix_a_compiles_to_figure_5s_document():
    doc = query_document(APPENDIX_A_XML, schemas, "appendix_a")
    assert doc == {
        "version": 1,
        "name": "appendix_a",
        "inputs": {"AisGpsStream": {}, "RouteStream": {}},
        "boxes": {
            "Join_0": {
                "type": "join",
                "left": "AisGpsStream",
                "right": "RouteStream",
                "on": ["MMSI"],
                "within": "1h",
            },
            "Filter_0": {
                "type": "filter",
                "in": "Join_0",
                "where": "((Next_leg) = ('Los Angeles')) AND ((Free_load) > (10))",
            },
        },
        "outputs": {"OutputAdapter": {"from": "Filter_0"}},
    }
    # ... which validates and is rewritten under Appendix B's policies as the hand-written
    # one is (test_rewrite_paper.py).
    plan = validate(doc, streams=APPENDIX_STREAMS)
    port = Subject(frozenset({"Port Authority"}), PORT.attributes)
    [join] = rewrite(doc, plan, load_xml_policies(APPENDIX_B, METHODS), port).added
    assert join["policies"] == ["Port Authority#3"] and join["after"] == "Join_0"


JOIN_EQUALS = """<equals>
        <attribute name="MMSI" inputstream="Source.0.out" />
        <attribute name="MMSI" inputstream="Source.1.out" />
      </equals>"""


@pytest.mark.parametrize(
    ("old", "new", "reason", "code"),
    [
        ("filter", "sort", "unknown operator <sort>", "QUERY_XML_INVALID"),
        (
            'name="RouteStream"',
            'name="Nowhere"',
            "no input stream of this name",
            "QUERY_XML_INVALID",
        ),
        (JOIN_EQUALS, JOIN_EQUALS.replace("equals", "lessthan"), "equalities", "QUERY_XML_INVALID"),
        (
            'name="Next_leg" inputstream="Join',
            'name="Latitude" inputstream="Join',
            "Latitude",
            "QUERY_XML_INVALID",
        ),
        (
            '"Filter.0.out" />\n</outputstream>',
            '"F.out" />\n</outputstream>',
            "'F.out' is no",
            "QUERY_XML_INVALID",
        ),
        (
            "<root>",
            '<!DOCTYPE root [<!ENTITY x "y">]><root>',
            "DTD or entities",
            "QUERY_XML_INVALID",
        ),
        ("<bool_and>", "<bool_not>" * 70 + "<bool_and>", "the limit of 64 levels", "TOO_DEEP"),
    ],
)
def test_what_it_cannot_express_is_refused_naming_where(old, new, reason, code):
    assert old in APPENDIX_A_XML
    text = APPENDIX_A_XML.replace(old, new)
    if new.startswith("<bool_not>"):  # closed as deep as opened
        text = text.replace("</bool_and>", "</bool_and>" + "</bool_not>" * 70)
    with pytest.raises(DiagramInvalid) as err:
        query_document(text, schemas, None)
    [problem] = err.value.problems
    assert problem.code == code and reason in problem.message, problem
