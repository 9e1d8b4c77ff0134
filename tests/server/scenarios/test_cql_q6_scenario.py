"""000's Q6 end to end on a live server (real Spark, HTTP, socket.io): the join of two count
windows is created from CQL at the paper's level [1, B], deployed, and fed a multilevel message
log by three organisations in several requests (several micro-batches, both windows carried in
Spark's state, arrival order from the ingestion log). Company 2's messages never reach a
window; each delay arrives once, labelled with the OR of its receipt's and its send's level."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from serverkit import PASSWORD, Client, wait_until

EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)
LEVEL = {"coi1": "C1", "coi2": "B"}
CQL = """CREATE DIAGRAM q6;
SELECT R.timestamp - S.timestamp AS delay
FROM MessageLog R [ROWS 100], MessageLog S [ROWS 100]
WHERE S.msgType = 'send' AND S.outcome = 'success'
AND R.msgType = 'receive' AND R.outcome = 'success'
AND R.receiver = 'Company1' AND R.sender = 'CompanyB'
AND S.receiver = 'CompanyB' AND S.sender = 'Company1'
AND S.serviceId = R.serviceId
AT LEVEL [coi1: C1, coi2: B]"""
SEND, RECEIVE = ("send", "Company1", "CompanyB"), ("receive", "CompanyB", "Company1")
# Requests in order: (user, [(second, service, message)]); u1 is of company C1, ub of B, u2 of
# C2, whose messages the level [C1, B] does not dominate.
REQUESTS = [
    ("u1", [(1, "5", SEND)]),
    ("ub", [(2, "5", RECEIVE)]),
    ("u2", [(3, "5", SEND)]),
    ("u1", [(4, "7", SEND)]),
    ("ub", [(5, "7", RECEIVE), (6, "5", RECEIVE)]),
    ("u2", [(7, "7", RECEIVE)]),
    ("u1", [(8, "5", SEND), (9, "7", RECEIVE)]),
    ("u1", [(10, "7", SEND)]),  # last, so its delays arrive after every earlier one
]
ORGANISATION = {"u1": ("coi1", "C1"), "ub": ("coi2", "B"), "u2": ("coi1", "C2")}


def reference() -> list[tuple[float, dict]]:
    """CQL's ISTREAM with windows larger than the log: each dominated message, as it arrives,
    pairs with every earlier dominated one of the other kind for the same service."""
    seen, out = [], []
    for user, messages in REQUESTS:
        if user == "u2":
            continue
        for second, service, message in messages:
            for other_second, other_service, other_message, other_user in seen:
                if other_service == service and other_message != message:
                    receipt, send = (
                        (second, other_second) if message is RECEIVE else (other_second, second)
                    )
                    level = dict([ORGANISATION[user], ORGANISATION[other_user]])
                    out.append((float(receipt - send), level))
            seen.append((second, service, message, user))
    return out


def test_q6_delivers_each_delay_once_at_its_level(live):
    joe = Client(live.url, "joe", PASSWORD)
    joe.call("POST", "/roles", 201, json={"name": "FEED"})
    fields = {
        "serviceId": "string",
        "msgType": "string",
        "sender": "string",
        "receiver": "string",
        "timestamp": "timestamp",
        "outcome": "string",
    }
    joe.call(
        "POST", "/schemas", 201, json={"name": "m", "fields": fields, "event_time": "timestamp"}
    )
    joe.call("POST", "/streams", 201, json={"name": "MessageLog", "schema": "m"})
    for type_, name, action in (
        ("schema", "m", "VIEW_OBJECT"),
        ("stream", "MessageLog", "VIEW_OBJECT"),
        ("stream", "MessageLog", "WRITE"),
    ):
        joe.call("PUT", f"/permissions/{type_}/{name}/FEED/{action}")
    for coi, companies in (("coi1", ("C1", "C2")), ("coi2", ("A", "B"))):
        joe.call("POST", "/levels/classes", 201, json={"name": coi})
        for company in companies:
            joe.call("POST", f"/levels/classes/{coi}/companies", 201, json={"name": company})
    joe.call("PUT", "/levels/streams/MessageLog", json={"multilevel": True})
    feeders = {}
    for user, (_, company) in ORGANISATION.items():
        joe.call(
            "POST", "/users", 201, json={"name": user, "password": PASSWORD, "roles": ["FEED"]}
        )
        joe.call("PUT", f"/levels/users/{user}", json={"organisation": company})
        feeders[user] = Client(live.url, user, PASSWORD)
    joe.call("PUT", "/levels/roles/ADMIN", json={"clearance": LEVEL})

    made = joe.call("POST", "/diagrams", 201, json={"cql": CQL})
    assert made["document"]["boxes"]["out_join"]["rows"] == {"left": 100, "right": 100}
    joe.call("POST", "/diagrams/q6/deploy")
    joe.connect()
    assert joe.emit("subscribe", {"output": "out"}) == {"subscribed": "out"}
    want = reference()
    assert len(want) == 8
    for user, messages in REQUESTS:
        rows = [
            {
                "timestamp": (EPOCH + timedelta(seconds=second)).isoformat(),
                "serviceId": service,
                "msgType": kind,
                "sender": sender,
                "receiver": receiver,
                "outcome": "success",
            }
            for second, service, (kind, sender, receiver) in messages
        ]
        feeders[user].call("POST", "/streams/MessageLog/tuples", json=rows)
    wait_until(lambda: len(joe.received) >= len(want), 120, f"{len(want)} delays")
    got = [(t["delay"], sorted(t["_level"].items())) for t in joe.received]
    assert sorted(got) == sorted((d, sorted(level.items())) for d, level in want)
    assert all(t["_sources"] == ["MessageLog"] for t in joe.received)
    for client in (joe, *feeders.values()):
        client.close()
