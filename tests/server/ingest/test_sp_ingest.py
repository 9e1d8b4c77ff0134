"""The way in for security punctuations (docs/punctuations.md): ``{"sp": ...}`` items (JSON and
CQL ``INSERT SP``) and ``_stamp``-ed tuples in REST and socket.io batches, WRITE on the stream;
on a live server with real Spark and socket.io clients. Then the crash test: a ``sluice serve``
process killed between an sp and the tuples it governs; after the restart the same tuples
reach the same roles."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from serverkit import PASSWORD, Client, wait_until
from wardkit import open_ward

from server.control.diagrams import run

EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)
WARD = {
    "version": 1,
    "name": "ward",
    "inputs": {"vitals": {}},
    "outputs": {"seen": {"from": "vitals"}},
}


def vital(n: int, ts: int | None = None, csn: int = 1) -> dict:
    out = {"t": (EPOCH + timedelta(seconds=n)).isoformat(), "patient": n, "bpm": 60 + n}
    return out if ts is None else {**out, "_stamp": {"ts": ts, "csn": csn}}


def sp(roles, ts: int, sn: int = 1, **more) -> dict:
    return {"sp": {"ddp": {"streams": "vitals", **more}, "srp": roles, "ts": ts, "sn": sn}}


def patients(client: Client) -> list[int]:
    return [t["patient"] for t in client.received]


def ward(url: str) -> tuple[Client, Client, Client, Client]:
    """joe sets up the ward; dan (DOCTOR) and nina (NURSE) subscribe to ``seen``; fe (FEED)
    writes vitals."""
    joe = Client(url, "joe", PASSWORD)
    open_ward(joe, WARD)
    dan, nina = Client(url, "dan", PASSWORD), Client(url, "nina", PASSWORD)
    for client in (dan, nina):
        client.connect(resubscribe=["seen"], resume=True)
    subscribed_again(dan, nina)
    return joe, dan, nina, Client(url, "fe", PASSWORD)


def deployed_for(url: str, owner: Client, document: dict, output: str, users) -> list[Client]:
    """``owner`` creates and deploys ``document`` and lets doctors and nurses subscribe to its
    ``output``; a socket for each of ``users``, subscribed to it."""
    owner.call("POST", "/diagrams", 201, json={"document": document})
    owner.call("POST", f"/diagrams/{document['name']}/deploy", timeout=180)
    for role in ("DOCTOR", "NURSE"):
        for action in ("VIEW_OBJECT", "SUBSCRIBE"):
            owner.call("PUT", f"/permissions/output/{output}/{role}/{action}")
    clients = [Client(url, user, PASSWORD) for user in users]
    for client in clients:
        client.connect()
        assert client.emit("subscribe", {"output": output}) == {"subscribed": output}
    return clients


def test_sps_and_stamped_tuples_come_in_rest_and_socket_batches(live):
    joe, dan, nina, fe = ward(live.url)
    both = ["DOCTOR", "NURSE"]
    ack = fe.call("POST", "/streams/vitals/tuples", json=[sp(both, 1), vital(1, 1)])
    assert ack["count"] == 1  # the sp is logged, not counted as a tuple
    wait_until(lambda: patients(dan) == [1] and patients(nina) == [1], 120, "both see 1")

    # An attribute-level policy: nurses may read bpm only, so the nurse gets the tuple with
    # its other fields hidden (null, and named), the doctor all of it.
    fe.connect()
    fe.emit(
        "ingest",
        {
            "stream": "vitals",
            "tuples": [sp("DOCTOR", 2), sp("NURSE", 2, 2, attributes="bpm"), vital(2, 2, 2)],
        },
    )
    # CQL: one policy of one statement, for nurses only; a later tuple under it.
    cql = "INSERT SP INTO STREAM vitals LET SRP = frbac:NURSE"
    fe.call("POST", "/streams/vitals/tuples", json=[{"sp": cql, "ts": 3}, vital(3, 3)])
    wait_until(lambda: patients(nina) == [1, None, 3], 120, "the nurse's tuple under the CQL sp")
    wait_until(lambda: patients(dan) == [1, 2], 120, "the doctor's tuple under policy 2")
    # Hidden fields are named in the output's field order, as the doctor's tuple has them.
    order = [k for k in dan.received[1] if k in ("t", "patient")]
    hidden = {"t": None, "patient": None, "bpm": 62, "_hidden": order}
    assert {k: v for k, v in nina.received[1].items() if k != "_sources"} == hidden
    assert "_hidden" not in dan.received[1] and dan.received[1]["patient"] == 2
    # Read back from the result log, as a late subscriber would, the same holds.
    read = nina.call("GET", "/outputs/seen/results?from=0")
    logged = read["tuples"]
    assert [t["patient"] for t in logged] == [1, None, 3] and logged[1]["_hidden"] == order
    # ... with the policy runs the `policy` event tells a socket: the roles of hers each lets read
    assert read["policies"] == [{"roles": ["NURSE"], "tuples": 3}]
    assert dan.call("GET", "/outputs/seen/results?from=1")["policies"] == [
        {"roles": ["DOCTOR"], "tuples": 1}
    ]
    user = {"name": "duo", "password": PASSWORD, "roles": ["DOCTOR", "NURSE"]}
    joe.call("POST", "/users", 201, json=user)
    duo = Client(live.url, "duo", PASSWORD)
    assert duo.call("GET", "/outputs/seen/results?from=0")["policies"] == [
        {"roles": ["DOCTOR", "NURSE"], "tuples": 2},
        {"roles": ["NURSE"], "tuples": 1},
    ]

    # A bad sp refuses the whole batch, naming the item; nothing of it is logged.
    bad = fe.call("POST", "/streams/vitals/tuples", 400, json=[vital(4, 3), sp("DOCTOR", 0)])
    assert bad["error"]["code"] == "SP_INVALID" and "item 1" in bad["error"]["message"]
    # Without WRITE, nobody sends sps.
    refused = dan.call("POST", "/streams/vitals/tuples", 403, json=[sp("DOCTOR", 9)])
    assert refused["error"]["code"] == "PERMISSION_DENIED"
    fe.call("POST", "/streams/vitals/tuples", json=[vital(5, 3)])
    wait_until(lambda: patients(nina) == [1, None, 3, 5], 120, "the nurse's next tuple")
    assert patients(dan) == [1, 2]
    for client in (joe, dan, nina, fe, duo):
        client.close()


def subscribed_again(*clients: Client) -> None:
    """Each socket (re)connected and subscribed, acknowledged: a live subscription that came
    after a batch would miss it, and these clients had received nothing to resume from (the
    subscription a connection sends on its own is not awaited)."""
    for client in clients:
        wait_until(lambda c=client: c.sock.connected, 120, "the socket to reconnect")
        assert client.emit("subscribe", {"output": "seen"}) == {"subscribed": "seen"}


@pytest.mark.spark  # Spark in the `sluice serve` process, which no fixture tells
def test_a_restart_between_an_sp_and_its_tuples_sends_them_to_the_same_roles(serve):
    server = serve(spark_master="local[2]", admin_user="joe", admin_password=PASSWORD)
    server.start()
    joe, dan, nina, fe = ward(server.url)
    fe.call("POST", "/streams/vitals/tuples", json=[sp("DOCTOR", 1)])  # acknowledged: durable
    server.kill()
    server.start()
    subscribed_again(dan, nina)
    fe = Client(server.url, "fe", PASSWORD)
    fe.call("POST", "/streams/vitals/tuples", json=[vital(1, 1), vital(2, 1)])
    wait_until(lambda: patients(dan) == [1, 2], 180, "the doctor's tuples after the restart")
    fe.call("POST", "/streams/vitals/tuples", json=[sp("NURSE", 2), vital(3, 2)])
    wait_until(lambda: patients(nina) == [3], 120, "the nurse's tuple under the next policy")
    assert patients(dan) == [1, 2]
    for client in (joe, dan, nina, fe):
        client.close()


def test_a_diagram_reading_a_governed_output_keeps_its_policy(live):
    """A derived input (another diagram's output) reads the roles its rows' sps deny from
    that output's result log: a row the nurse may not read upstream she may not read here."""
    joe, dan, nina, fe = ward(live.url)
    derived = {
        "version": 1,
        "name": "ward2",
        "inputs": {"theirs": {"output": "seen"}},
        "outputs": {"again": {"from": "theirs"}},
    }
    dan2, nina2 = deployed_for(live.url, joe, derived, "again", ("dan", "nina"))
    fe.call("POST", "/streams/vitals/tuples", json=[sp("DOCTOR", 1), vital(1, 1)])
    fe.call("POST", "/streams/vitals/tuples", json=[sp(["DOCTOR", "NURSE"], 2), vital(2, 2)])
    wait_until(lambda: patients(dan2) == [1, 2], 180, "the doctor's rows downstream")
    wait_until(lambda: patients(nina2) == [2], 120, "the nurse's row downstream")
    wait_until(lambda: patients(nina) == [2] and patients(dan) == [1, 2], 60, "upstream rows")
    for client in (joe, dan, nina, fe, dan2, nina2):
        client.close()


def test_a_server_policy_refines_what_mutable_sps_grant(live):
    """Section 4.2: the server's own sps refine (intersect) what the provider's mutable sps
    grant, for the tuples admitted from then on; an immutable sp's grant stays. Combined by
    union instead, they widen it. Only an administrator sets it, on a governed stream, with
    every change audited."""
    joe, dan, nina, fe = ward(live.url)
    both = ["DOCTOR", "NURSE"]
    none = {"server_policy": None, "combine": "intersect"}
    assert joe.call("GET", "/streams/vitals/server_policy") == none
    denied = fe.call("PUT", "/streams/vitals/server_policy", 403, json={"server_policy": []})
    assert denied["error"]["code"] == "PERMISSION_DENIED"
    bad = joe.call(
        "PUT", "/streams/vitals/server_policy", 400, json={"server_policy": [{"srp": "X", "ts": 1}]}
    )
    assert bad["error"]["code"] == "SP_INVALID" and "server_policy[0]" in bad["error"]["message"]
    doctors_only = [{"ddp": {"streams": "vitals"}, "srp": "DOCTOR"}]
    answer = joe.call("PUT", "/streams/vitals/server_policy", json={"server_policy": doctors_only})
    assert answer["server_policy"][0]["srp"] == "DOCTOR"

    # The provider grants both; the server lets only doctors read what it grants mutably.
    fe.call("POST", "/streams/vitals/tuples", json=[sp(both, 1), vital(1, 1)])
    wait_until(lambda: patients(dan) == [1], 120, "the doctor's tuple")
    # An immutable grant is the provider's word: the server's policy leaves it alone.
    immutable = sp(both, 2)
    immutable["sp"]["immutable"] = True
    fe.call("POST", "/streams/vitals/tuples", json=[immutable, vital(2, 2)])
    wait_until(lambda: patients(nina) == [2] and patients(dan) == [1, 2], 120, "both see 2")
    # Removed: the provider's grants stand alone again.
    joe.call("PUT", "/streams/vitals/server_policy", json={"server_policy": None})
    fe.call("POST", "/streams/vitals/tuples", json=[sp(both, 3), vital(3, 3)])
    # each audience's room is sent its rows on its own: wait for both, not one then the other
    wait_until(
        lambda: patients(nina) == [2, 3] and patients(dan) == [1, 2, 3],
        120,
        "the nurse's and the doctor's tuple without it",
    )
    # By union, the server's sps widen what a mutable sp grants: the provider names doctors,
    # the server nurses too.
    nurses = [{"ddp": {"streams": "vitals"}, "srp": "NURSE"}]
    union = joe.call(
        "PUT", "/streams/vitals/server_policy", json={"server_policy": nurses, "combine": "union"}
    )
    assert union["combine"] == "union" and joe.call("GET", "/streams/vitals/server_policy") == union
    fe.call("POST", "/streams/vitals/tuples", json=[sp("DOCTOR", 4), vital(4, 4)])
    wait_until(
        lambda: patients(nina) == [2, 3, 4] and patients(dan) == [1, 2, 3, 4],
        120,
        "the nurse's tuple by the server's union, and the doctor's",
    )
    odd = {"server_policy": nurses, "combine": "both"}
    assert joe.call("PUT", "/streams/vitals/server_policy", 400, json=odd)["error"]["code"] == (
        "INVALID_BODY"
    )
    [widened, removed, first] = joe.call("GET", "/audit?event=server_policy")["entries"][:3]
    assert first["details"]["new"] == answer and removed["details"]["new"] == none
    assert widened["details"]["new"] == union
    for client in (joe, dan, nina, fe):
        client.close()


def test_on_result_delegates_where_the_owner_role_holds_the_grant_option(live):
    """Figure 8: a diagram's output relabels its results for cardiologists. A tuple whose sp
    gave the diagram's owner role the grant option reaches the cardiologist, not the doctor
    its provider named; one without the option is only narrowed (doctors AND cardiologists:
    nobody). The ward's own output is untouched. The ON RESULT sps give cardiologists the grant
    option in turn, so a diagram a cardiologist owns, reading that output, delegates its
    results again, to nurses (a chain). A diagram over a stream no sp governs may not
    relabel."""
    joe, dan, nina, fe = ward(live.url)
    owner = joe.call("GET", "/diagrams/ward")["owner"]["role"]
    joe.call("POST", "/roles", 201, json={"name": "CARDIOLOGIST"})
    joe.call(
        "POST",
        "/users",
        201,
        json={"name": "carl", "password": PASSWORD, "roles": ["CARDIOLOGIST"]},
    )
    policy = [{"ddp": {}, "srp": "CARDIOLOGIST", "grant": True}]
    consult = {
        "version": 1,
        "name": "consult",
        "inputs": {"vitals": {}},
        "outputs": {"cardio": {"from": "vitals", "on_result": policy}},
    }
    joe.call("POST", "/diagrams", 201, json={"document": consult})
    joe.call("POST", "/diagrams/consult/deploy", timeout=180)
    grants = [("schema", "v", "VIEW_OBJECT")]
    grants += [("stream", "vitals", a) for a in ("VIEW_OBJECT", "READ_TUPLE")]
    grants += [("output", "cardio", a) for a in ("VIEW_OBJECT", "SUBSCRIBE")]
    for role in ("CARDIOLOGIST", "DOCTOR"):
        for type_, name, action in grants:
            joe.call("PUT", f"/permissions/{type_}/{name}/{role}/{action}")
    carl, dan2 = Client(live.url, "carl", PASSWORD), Client(live.url, "dan", PASSWORD)
    for client in (carl, dan2):
        client.connect()
        assert client.emit("subscribe", {"output": "cardio"}) == {"subscribed": "cardio"}

    delegable = {"sp": {"ddp": {}, "srp": owner, "grant": True, "ts": 1, "sn": 2}}
    fe.call("POST", "/streams/vitals/tuples", json=[sp("DOCTOR", 1), delegable, vital(1, 1, 2)])
    plain = sp(["DOCTOR", owner], 2)
    fe.call("POST", "/streams/vitals/tuples", json=[plain, vital(2, 2), vital(3, 2)])
    wait_until(lambda: patients(carl) == [1], 120, "the cardiologist's delegated tuple")
    wait_until(lambda: patients(dan) == [1, 2, 3], 120, "the ward's own output, unchanged")
    later = Client(live.url, "carl", PASSWORD)  # read back from the result log: the same
    assert [
        t["patient"] for t in later.call("GET", "/outputs/cardio/results?from=0")["tuples"]
    ] == [1]
    assert patients(dan2) == [] and patients(carl) == [1]

    # The chain: carl's diagram reads `cardio` and delegates to nurses what carl may delegate.
    joe.call("PUT", "/permissions/system/system/CARDIOLOGIST/ADD")
    opinion = {"from": "cardio", "on_result": [{"ddp": {}, "srp": "NURSE"}]}
    second = {"version": 1, "name": "second", "inputs": {"cardio": {"output": "cardio"}}}
    second["outputs"] = {"opinion": opinion}
    nurse, doctor = deployed_for(live.url, carl, second, "opinion", ("nina", "dan"))
    delegable = {"sp": {"ddp": {}, "srp": owner, "grant": True, "ts": 3, "sn": 2}}
    fe.call("POST", "/streams/vitals/tuples", json=[sp("DOCTOR", 3), delegable, vital(4, 3, 2)])
    wait_until(lambda: patients(nurse) == [4], 120, "the nurse's tuple, delegated twice")
    assert patients(carl) == [1, 4] and patients(doctor) == []

    plain_doc = {**consult, "name": "plain", "inputs": {"other": {}}}
    plain_doc["outputs"] = {"o2": {"from": "other", "on_result": policy}}
    joe.call("POST", "/streams", 201, json={"name": "other", "schema": "v"})
    refused = joe.call("POST", "/diagrams", 400, json={"document": plain_doc})["error"]
    problems = [(p["code"], p["path"]) for p in refused["details"]["problems"]]
    assert problems == [("ON_RESULT_UNGOVERNED", "outputs.o2.on_result")]
    for client in (joe, dan, nina, fe, carl, dan2, later, nurse, doctor):
        client.close()


def test_roles_past_the_64th_read_what_their_sps_grant_and_a_later_one_after_a_redeploy(
    live, caplog
):
    """More than 64 roles (docs/punctuations.md): with 188 roles made first, DOCTOR, NURSE and
    FEED get bits 189-191, the diagram three words of roles. The nurse (bit 190) receives the
    tuple with the fields only the doctor may read hidden, and hears her own role in
    ``policy``. A role made after the deploy (bit 192, beyond the diagram's words) receives
    nothing the log grants it until the diagram is deployed again."""
    joe = Client(live.url, "joe", PASSWORD)
    for n in range(1, 189):
        joe.call("POST", "/roles", 201, json={"name": f"FILLER{n}"})
    joe, dan, nina, fe = ward(live.url)
    told: list[list[str]] = []
    nina.sock.on("policy", lambda data: told.append(data["roles"]))
    everyone = ["DOCTOR", "NURSE", "LATE"]
    fe.call(
        "POST",
        "/streams/vitals/tuples",
        json=[sp("DOCTOR", 1), sp("NURSE", 1, 2, attributes="bpm"), vital(1, 1, 2)],
    )
    wait_until(lambda: patients(dan) == [1] and patients(nina) == [None], 120, "both see 1")
    assert nina.received[0]["bpm"] == 61 and set(nina.received[0]["_hidden"]) == {"t", "patient"}
    assert told[-1] == ["NURSE"]
    # read back from the result log, and in a preview of the running diagram, alike
    (logged,) = nina.call("GET", "/outputs/seen/results?from=0")["tuples"]
    assert (logged["patient"], logged["bpm"]) == (None, 61)
    joe.call("PUT", "/permissions/diagram/ward/NURSE/VIEW_OBJECT")
    (peeked,) = nina.call("GET", "/diagrams/ward/boxes/seen/preview")["tuples"]
    assert (peeked["patient"], peeked["bpm"], set(peeked["_hidden"])) == (
        None,
        61,
        {"t", "patient"},
    )

    joe.call("POST", "/roles", 201, json={"name": "LATE"})
    joe.call("POST", "/users", 201, json={"name": "lou", "password": PASSWORD, "roles": ["LATE"]})
    grants = [("schema", "v", "VIEW_OBJECT"), ("output", "seen", "VIEW_OBJECT")]
    grants += [("stream", "vitals", a) for a in ("VIEW_OBJECT", "READ_TUPLE")]
    grants += [("output", "seen", "SUBSCRIBE")]
    for type_, name, action in grants:
        joe.call("PUT", f"/permissions/{type_}/{name}/LATE/{action}")
    lou = Client(live.url, "lou", PASSWORD)
    lou.connect(resubscribe=["seen"])
    wait_until(lambda: lou.sock.connected, 60, "lou's subscription")
    fe.call("POST", "/streams/vitals/tuples", json=[sp(everyone, 2), vital(2, 2)])
    wait_until(lambda: patients(dan) == [1, 2] and patients(nina) == [None, 2], 120, "tuple 2")
    assert patients(lou) == []  # the log grants LATE, the running diagram has no room for it
    # A restart resumes with the words recorded at the deploy: the same version (checkpoint).
    svc = live.app.extensions["sluice"]
    before = svc.runtime.status("ward")["version"]
    (resumable,) = [r for r in svc.catalog.objects.resumable() if r.diagram.name == "ward"]
    run(svc, resumable)
    assert svc.runtime.status("ward")["version"] == before
    assert "ward resumes with room for 192 roles' bits" in caplog.text  # the log says why

    joe.call("POST", "/diagrams/ward/deploy", timeout=180)
    for client in (dan, lou):
        assert client.emit("subscribe", {"output": "seen"}) == {"subscribed": "seen"}
    fe.call("POST", "/streams/vitals/tuples", json=[vital(3, 2)])
    wait_until(lambda: patients(lou) == [3] and 3 in patients(dan), 180, "tuple 3 for lou")
    for client in (joe, dan, nina, fe, lou):
        client.close()


@pytest.mark.spark  # Spark in the `sluice serve` process, which no fixture tells
def test_a_restart_resumes_a_wide_diagram_with_its_words_and_checkpoint(serve):
    """A ``sluice serve`` process killed and started again after a role was made beyond the
    running diagram's role words: the diagram resumes with the words it was deployed with (the
    same version, so its checkpoint) and the nurse at bit 190 receives what the next tuples'
    sps grant her."""
    server = serve(spark_master="local[2]", admin_user="joe", admin_password=PASSWORD)
    server.start()
    joe = Client(server.url, "joe", PASSWORD)
    for n in range(1, 189):
        joe.call("POST", "/roles", 201, json={"name": f"FILLER{n}"})
    joe, dan, nina, fe = ward(server.url)
    fe.call("POST", "/streams/vitals/tuples", json=[sp("NURSE", 1), vital(1, 1)])
    wait_until(lambda: patients(nina) == [1], 120, "the nurse's first tuple")
    version = joe.call("GET", "/diagrams/ward/status")["progress"]["version"]
    joe.call("POST", "/roles", 201, json={"name": "LATE"})  # bit 192: beyond three words
    server.kill()
    server.start()
    subscribed_again(dan, nina)
    joe, fe = Client(server.url, "joe", PASSWORD), Client(server.url, "fe", PASSWORD)
    wait_until(
        lambda: (
            (joe.call("GET", "/diagrams/ward/status")["progress"] or {}).get("state") == "running"
        ),
        180,
        "the diagram resumed",
    )
    assert joe.call("GET", "/diagrams/ward/status")["progress"]["version"] == version
    fe.call("POST", "/streams/vitals/tuples", json=[sp(["NURSE", "LATE"], 2), vital(2, 2)])
    wait_until(lambda: patients(nina) == [1, 2], 180, "the nurse's tuple after the restart")
    assert patients(dan) == []
    for client in (joe, dan, nina, fe):
        client.close()
