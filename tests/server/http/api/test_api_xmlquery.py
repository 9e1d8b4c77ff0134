"""A diagram in the ASSIST paper's XML query form (seed 002, Appendix A) through the REST API:
compiled to its document, which is validated, stored and shown like any other; problems come
with their code and the operator, and a stream the session cannot see looks missing."""

from __future__ import annotations

API = "/api/v1/diagrams"
XML = """<root><query>
  <inputstream name="in1"><outputstream name="Source.0.out"/></inputstream>
  <inputstream name="in2"><outputstream name="Source.1.out"/></inputstream>
  <join name="Join.0" within="10s">
    <inputstream name="Source.0.out"/><inputstream name="Source.1.out"/>
    <outputstream name="Join.0.out"/>
    <attribute name="dear"><input name="price" inputstream="Source.1.out"/></attribute>
    <predicate><equals>
      <attribute name="symbol" inputstream="Source.0.out"/>
      <attribute name="symbol" inputstream="Source.1.out"/>
    </equals></predicate>
  </join>
  <filter name="Filter.0">
    <inputstream name="Join.0.out"/><outputstream name="Filter.0.out"/>
    <predicate><greater_than>
      <attribute name="dear" inputstream="Join.0.out"/>
      <litteral type="System.Double" value="1.5"/>
    </greater_than></predicate>
  </filter>
  <outputstream name="xq_out"><inputstream name="Filter.0.out"/></outputstream>
</query></root>"""


def test_an_xml_query_is_stored_as_its_document(client, auth):
    checked = client.post(f"{API}/validate", json={"xml": XML}, headers=auth.headers("al")).json
    assert checked["valid"] is True
    made = client.post(API, json={"xml": XML, "name": "xq"}, headers=auth.headers("al"))
    assert made.status_code == 201, made.json
    doc = client.get(f"{API}/xq", headers=auth.headers("al")).json["document"]
    assert doc == {**checked["document"], "name": "xq"}
    assert doc["boxes"] == {
        "Join_0": {
            "type": "join",
            "left": "in1",
            "right": "in2",
            "on": ["symbol"],
            "within": "10s",
        },
        "Filter_0": {"type": "filter", "in": "Join_0", "where": "(right_price) > (1.5)"},
    }
    assert doc["outputs"] == {"xq_out": {"from": "Filter_0"}}


def test_xml_problems_come_with_code_and_operator(client, auth):
    bad = XML.replace(
        'name="dear" inputstream="Join.0.out"', 'name="cheap" inputstream="Join.0.out"'
    )
    checked = client.post(f"{API}/validate", json={"xml": bad}, headers=auth.headers("al")).json
    assert [(p["code"], p["path"]) for p in checked["problems"]] == [
        ("QUERY_XML_INVALID", "xml.Filter.0")
    ]
    refused = client.post(API, json={"xml": bad}, headers=auth.headers("al"))
    assert (refused.status_code, refused.json["error"]["code"]) == (400, "DIAGRAM_INVALID")
    both = client.post(
        API, json={"xml": XML, "cql": "SELECT * FROM in1"}, headers=auth.headers("al")
    )
    assert both.json["error"]["code"] == "INVALID_BODY"
    hidden = client.post(f"{API}/validate", json={"xml": XML}, headers=auth.headers("bob")).json
    assert "no input stream of this name" in hidden["problems"][0]["message"]
