"""Chinese-Wall levels end to end on a live server (real Spark, HTTP and socket.io clients):
two competing banks and two competing oil companies, a consultant cleared for one of each,
a diagram at the consultant's level; then the administrator lowers the clearance and the
next tuple of the bank is withheld while the oil company's still arrives. On a multilevel
stream (001's trusted stream) a sender states a tuple's level, public or of several
companies, within its clearance, and only subscribers cleared for it receive the tuple."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from serverkit import PASSWORD, Client, wait_until

EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)
STREAMS = {"bank_a": "A", "bank_b": "B", "oil_x": "X", "oil_y": "Y", "news": None}
WATCH = {
    "version": 1,
    "name": "watch",
    "level": {"banks": "A", "oil": "X"},
    "inputs": {name: {} for name in [*STREAMS, "messages"]},
    "boxes": {"all": {"type": "union", "in": [*STREAMS, "messages"]}},
    "outputs": {"seen": {"from": "all"}},
}

# The same diagram at bank B's level, which the consultant's clearance does not dominate.
RIVAL = {**WATCH, "name": "rival", "level": {"banks": "B"}, "outputs": {"r": {"from": "all"}}}


def define_classes(joe: Client) -> None:
    """The Chinese Wall of both scenarios: COI classes banks (A, B) and oil (X, Y)."""
    for coi, companies in (("banks", "AB"), ("oil", "XY")):
        joe.call("POST", "/levels/classes", 201, json={"name": coi})
        for company in companies:
            joe.call("POST", f"/levels/classes/{coi}/companies", 201, json={"name": company})


def tuple_(who: str, n: int) -> list[dict]:
    return [{"t": (EPOCH + timedelta(seconds=n)).isoformat(), "who": who, "n": n}]


def seen(client: Client) -> dict[str, dict]:
    """``who:n`` -> the level each received tuple showed."""
    return {f"{t['who']}:{t['n']}": t["_level"] for t in client.received}


def test_a_consultant_reads_one_company_per_class_until_the_clearance_is_lowered(live):
    joe = Client(live.url, "joe", PASSWORD)
    for role in ("CONSULTANT", "FEED"):
        joe.call("POST", "/roles", 201, json={"name": role})
    for user, role in (("al", "CONSULTANT"), ("ed", "FEED"), ("cy", "FEED")):
        joe.call("POST", "/users", 201, json={"name": user, "password": PASSWORD, "roles": [role]})
    fields = {"t": "timestamp", "who": "string", "n": "long"}
    joe.call("POST", "/schemas", 201, json={"name": "s", "fields": fields, "event_time": "t"})
    grants = [("schema", "s", r, "VIEW_OBJECT") for r in ("CONSULTANT", "FEED")]
    for stream in [*STREAMS, "messages"]:
        joe.call("POST", "/streams", 201, json={"name": stream, "schema": "s"})
        grants += [("stream", stream, "CONSULTANT", a) for a in ("VIEW_OBJECT", "READ_TUPLE")]
        grants += [("stream", stream, "FEED", a) for a in ("VIEW_OBJECT", "WRITE")]
    grants += [
        ("system", "system", "CONSULTANT", "ADD"),
        ("box_type", "union", "CONSULTANT", "USE"),
    ]
    for type_, name, role, action in grants:
        joe.call("PUT", f"/permissions/{type_}/{name}/{role}/{action}")

    # The Chinese Wall: two COI classes, each stream of one company (news is public), a
    # multilevel message log whose tuples take their sender's organisation.
    define_classes(joe)
    for stream, company in STREAMS.items():
        if company:
            joe.call("PUT", f"/levels/streams/{stream}", json={"company": company})
    joe.call("PUT", "/levels/streams/messages", json={"multilevel": True})
    joe.call("PUT", "/levels/users/ed", json={"organisation": "B"})
    joe.call("PUT", "/levels/users/cy", json={"organisation": "A"})
    joe.call("PUT", "/levels/roles/CONSULTANT", json={"clearance": {"banks": "A", "oil": "X"}})

    al = Client(live.url, "al", PASSWORD)
    al.call("POST", "/diagrams", 201, json={"document": RIVAL})
    refused = al.call("POST", "/diagrams/rival/deploy", 403)
    assert refused["error"]["code"] == "LEVEL_NOT_DOMINATED"
    al.call("POST", "/diagrams", 201, json={"document": WATCH})
    al.call("POST", "/diagrams/watch/deploy")
    al.connect()
    assert al.emit("subscribe", {"output": "seen"}) == {"subscribed": "seen"}

    ed, cy = Client(live.url, "ed", PASSWORD), Client(live.url, "cy", PASSWORD)
    ed.connect()
    for stream in STREAMS:
        ed.call("POST", f"/streams/{stream}/tuples", json=tuple_(stream, 1))
    ed.call("POST", "/streams/messages/tuples", json=tuple_("ed", 1))  # level B
    cy.call("POST", "/streams/messages/tuples", json=tuple_("cy", 1))  # level A
    wait_until(lambda: len(al.received) >= 4, 120, "the consultant's first tuples")
    assert seen(al) == {
        "bank_a:1": {"banks": "A"},
        "oil_x:1": {"oil": "X"},
        "news:1": {},
        "cy:1": {"banks": "A"},
    }

    # A `_level` is a level, never bits; and only a multilevel stream takes one.
    forged = ed.call(
        "POST", "/streams/messages/tuples", 400, json=[{**tuple_("ed", 2)[0], "_level": 0}]
    )
    assert forged["error"]["code"] == "LEVEL_BAD_SHAPE"
    lowered = ed.call(
        "POST", "/streams/bank_a/tuples", 400, json=[{**tuple_("bank_a", 2)[0], "_level": {}}]
    )
    assert lowered["error"]["code"] == "LEVEL_NOT_MULTILEVEL"

    # The administrator lowers the clearance: bank A is no longer covered, oil X still is.
    joe.call("PUT", "/levels/roles/CONSULTANT", json={"clearance": {"oil": "X"}})
    before = len(al.received)
    ed.call("POST", "/streams/bank_a/tuples", json=tuple_("bank_a", 2))
    ed.emit("ingest", {"stream": "oil_x", "tuples": tuple_("oil_x", 2)})
    wait_until(lambda: "oil_x:2" in seen(al), 120, "the oil company's next tuple")
    assert "bank_a:2" not in seen(al) and len(al.received) == before + 1
    entries = joe.call("GET", "/audit?event=levels")["entries"]
    assert entries[0]["object"] == "role:CONSULTANT" and entries[0]["details"]["new"] == {
        "oil": "X"
    }
    for client in (joe, al, ed, cy):
        client.close()


def test_senders_state_each_tuple_level_on_a_multilevel_stream(live):
    """A sender with no organisation sends public tuples, a trusted sender tuples at [A, X]
    (two companies, the papers' [1, B]) or at one company, in JSON or CSV; each reaches the
    subscribers whose clearance dominates it: bo, whose two roles are cleared for A and for X
    (a session is cleared by the union of its roles'), and di, cleared for A only."""
    joe = Client(live.url, "joe", PASSWORD)
    roles = {
        "BANKER": {"banks": "A"},
        "DRILLER": {"oil": "X"},
        "TRUSTED": {"banks": "T", "oil": "T"},
    }
    for role in [*roles, "FEED"]:
        joe.call("POST", "/roles", 201, json={"name": role})
    users = {"bo": ["BANKER", "DRILLER"], "di": ["BANKER"], "pat": ["FEED"], "tess": ["TRUSTED"]}
    for user, granted in users.items():
        joe.call("POST", "/users", 201, json={"name": user, "password": PASSWORD, "roles": granted})
    fields = {"t": "timestamp", "who": "string", "n": "long"}
    joe.call("POST", "/schemas", 201, json={"name": "s", "fields": fields, "event_time": "t"})
    grants = [("schema", "s", role, "VIEW_OBJECT") for role in [*roles, "FEED"]]
    grants += [("stream", "messages", r, a) for r in roles for a in ("VIEW_OBJECT", "READ_TUPLE")]
    grants += [
        ("stream", "messages", r, a) for r in ("FEED", "TRUSTED") for a in ("VIEW_OBJECT", "WRITE")
    ]
    grants += [("system", "system", "BANKER", "ADD"), ("box_type", "filter", "BANKER", "USE")]
    joe.call("POST", "/streams", 201, json={"name": "messages", "schema": "s"})
    for type_, name, role, action in grants:
        joe.call("PUT", f"/permissions/{type_}/{name}/{role}/{action}")
    define_classes(joe)
    joe.call("PUT", "/levels/streams/messages", json={"multilevel": True})
    for role, clearance in roles.items():
        joe.call("PUT", f"/levels/roles/{role}", json={"clearance": clearance})

    bo, di = Client(live.url, "bo", PASSWORD), Client(live.url, "di", PASSWORD)
    wall = {
        "version": 1,
        "name": "wall",
        "level": {"banks": "A", "oil": "X"},
        "inputs": {"messages": {}},
        "boxes": {"all": {"type": "filter", "in": "messages", "where": "n >= 0"}},
        "outputs": {"seen": {"from": "all"}},
    }
    bo.call("POST", "/diagrams", 201, json={"document": wall, "role": "BANKER"})
    bo.call("POST", "/diagrams/wall/deploy")  # bo's clearance, A or X, dominates [A, X]
    bo.call("PUT", "/permissions/output/seen/BANKER/SUBSCRIBE")
    for client in (bo, di):
        client.connect()
        assert client.emit("subscribe", {"output": "seen"}) == {"subscribed": "seen"}

    pat, tess = Client(live.url, "pat", PASSWORD), Client(live.url, "tess", PASSWORD)
    send = "/streams/messages/tuples"
    pat.call("POST", send, json=[{**tuple_("pat", 1)[0], "_level": {}}])  # public
    tess.call("POST", send, json=[{**tuple_("tess", 1)[0], "_level": "[A, X]"}])
    tess.call("POST", send, json=[{**tuple_("tess", 2)[0], "_level": {"banks": "A"}}])
    tess.call("POST", send, json=[{**tuple_("tess", 3)[0], "_level": "[B, X]"}])  # not [A, X]
    csv = f'who,n,t,_level\ntess,4,{tuple_("tess", 4)[0]["t"]},"[⊥, X]"\n'
    tess.call("POST", send, data=csv.encode(), headers={"Content-Type": "text/csv"})

    # Refused: no level and no organisation; a level above the sender's clearance (audited).
    unstated = pat.call("POST", send, 403, json=tuple_("pat", 2))
    assert unstated["error"]["code"] == "LEVEL_NO_ORGANISATION"
    above = pat.call("POST", send, 403, json=[{**tuple_("pat", 3)[0], "_level": {"banks": "A"}}])
    assert above["error"]["code"] == "LEVEL_NOT_CLEARED"
    assert above["error"]["details"] == {"tuple": 0}
    denied = joe.call("GET", "/audit?event=ingest")["entries"]
    assert [(e["user"], e["allowed"]) for e in denied[:2]] == [("pat", False), ("pat", False)]

    pat.call("POST", send, json=[{**tuple_("pat", 9)[0], "_level": {}}])  # the last one
    for client in (bo, di):
        wait_until(lambda c=client: "pat:9" in seen(c), 120, f"{client.user}'s last tuple")
    assert seen(bo) == {
        "pat:1": {},
        "tess:1": {"banks": "A", "oil": "X"},
        "tess:2": {"banks": "A"},
        "tess:4": {"oil": "X"},
        "pat:9": {},
    }
    assert seen(di) == {"pat:1": {}, "tess:2": {"banks": "A"}, "pat:9": {}}
    for client in (joe, bo, di, pat, tess):
        client.close()
