"""The ward of the security-punctuation tests (docs/punctuations.md): a vital-signs stream
governed by its provider's sps, read by a doctor and a nurse through one diagram."""

from __future__ import annotations

from serverkit import PASSWORD, Client

GOVERNED = {"governed": True, "tid_field": "patient"}  # vitals' punctuation settings


def open_ward(joe: Client, document: dict) -> None:
    """joe makes the roles DOCTOR, NURSE and FEED with a user each (dan, nina, fe), the
    governed stream ``vitals`` (schema ``v``: t, patient, bpm; patient names the tuple), and
    deploys ``document``, whose output ``seen`` doctors and nurses may subscribe to and
    whose stream fe writes."""
    for role in ("DOCTOR", "NURSE", "FEED"):
        joe.call("POST", "/roles", 201, json={"name": role})
    for user, role in (("dan", "DOCTOR"), ("nina", "NURSE"), ("fe", "FEED")):
        joe.call("POST", "/users", 201, json={"name": user, "password": PASSWORD, "roles": [role]})
    fields = {"t": "timestamp", "patient": "long", "bpm": "long"}
    joe.call("POST", "/schemas", 201, json={"name": "v", "fields": fields, "event_time": "t"})
    joe.call("POST", "/streams", 201, json={"name": "vitals", "schema": "v"})
    assert joe.call("PUT", "/streams/vitals/punctuations", json=GOVERNED) == GOVERNED
    joe.call("POST", "/diagrams", 201, json={"document": document})
    joe.call("POST", f"/diagrams/{document['name']}/deploy", timeout=180)
    grants = [("stream", "vitals", "FEED", a) for a in ("VIEW_OBJECT", "WRITE")]
    for role in ("DOCTOR", "NURSE"):
        grants += [("schema", "v", role, "VIEW_OBJECT")]
        grants += [("stream", "vitals", role, a) for a in ("VIEW_OBJECT", "READ_TUPLE")]
        grants += [("output", "seen", role, a) for a in ("VIEW_OBJECT", "SUBSCRIBE")]
    for type_, name, role, action in grants:
        joe.call("PUT", f"/permissions/{type_}/{name}/{role}/{action}")
