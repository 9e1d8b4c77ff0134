"""Security punctuations enforced end to end on a live server (real Spark, HTTP, socket.io):
a vital-signs stream governed by its provider's sps; a doctor and a nurse subscribe to one
output and each hears the policy before its rows; the provider's policy changes mid-stream
and the nurse's view stops while the doctor's continues; a tuple under no policy reaches
nobody.

No endpoint accepts sps yet (docs/punctuations.md): the test logs them, and the tuples'
stamps, through the server's own ingestion log, as the way in will."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from serverkit import PASSWORD, Client, wait_until
from wardkit import GOVERNED, open_ward

from boxes.punctuations import Sp, Stamp
from boxes.punctuations import patterns as p
from server.ingest.admission import governance

EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)
WARD = {
    "version": 1,
    "name": "ward",
    "inputs": {"vitals": {}},
    "boxes": {"high": {"type": "filter", "in": "vitals", "where": "bpm > 0"}},
    "outputs": {"seen": {"from": "high"}},
}


def vitals(n: int) -> list[dict]:
    return [{"t": (EPOCH + timedelta(seconds=n)).isoformat(), "patient": n, "bpm": 60 + n}]


def patients(client: Client) -> list[int]:
    return [t["patient"] for t in client.received]


def test_a_policy_change_stops_the_nurses_view_while_the_doctors_continues(live):
    joe = Client(live.url, "joe", PASSWORD)
    open_ward(joe, WARD)

    dan, nina = Client(live.url, "dan", PASSWORD), Client(live.url, "nina", PASSWORD)
    told: dict[str, list] = {"dan": [], "nina": []}  # each policy event, and the rows before it
    for name, client in (("dan", dan), ("nina", nina)):
        client.connect()
        client.sock.on(
            "policy", lambda d, n=name, c=client: told[n].append((d["roles"], len(c.received)))
        )
        assert client.emit("subscribe", {"output": "seen"}) == {"subscribed": "seen"}

    svc = live.app.extensions["sluice"]
    log = svc.runtime.log

    def send(sps: list[Sp], n: int, stamp: Stamp | None) -> None:
        if sps:
            log.append_sps("vitals", sps)
        log.append("vitals", vitals(n), governance=governance(svc, log, "vitals"), stamps=[stamp])

    both = p.members("DOCTOR", "NURSE")
    send([Sp(roles=both, ts=1, sn=1)], 1, Stamp(1, 1))
    wait_until(lambda: patients(dan) == [1] and patients(nina) == [1], 120, "both see patient 1")

    # The provider narrows its policy to doctors: the next tuple reaches dan, not nina.
    send([Sp(roles=p.const("DOCTOR"), ts=2, sn=1)], 2, Stamp(2, 1))
    wait_until(lambda: patients(dan) == [1, 2], 120, "the doctor's next tuple")

    # A tuple sent without a stamp (the REST way in, as it is) names no policy: nobody.
    fe = Client(live.url, "fe", PASSWORD)
    fe.call("POST", "/streams/vitals/tuples", json=vitals(3))
    # It emptied the current policy, so the next tuple needs a new one; the nurse is back.
    send([Sp(roles=both, ts=4, sn=1)], 4, Stamp(4, 1))
    wait_until(lambda: patients(dan) == [1, 2, 4], 120, "the doctor's tuple under policy 4")
    wait_until(lambda: patients(nina) == [1, 4], 120, "the nurse's tuple under policy 4")
    assert all("_sp_denied" not in t for t in dan.received + nina.received)
    # Each heard its policy before its first row; only its own role is named, and the policy
    # is not sent again while the roles it grants this subscriber stay the same.
    assert told == {"dan": [(["DOCTOR"], 0)], "nina": [(["NURSE"], 0)]}
    entries = joe.call("GET", "/audit?event=punctuations")["entries"]
    assert entries[0]["object"] == "stream:vitals" and entries[0]["details"]["new"] == GOVERNED
    for client in (joe, dan, nina, fe):
        client.close()
