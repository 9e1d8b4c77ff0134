"""A standby's socket.io events that need the runtime (docs/deploy.md "The runtime lease"):
``ingest``, and the replay of ``subscribe`` with ``from``, go to the lease's holder through
its REST API, by the one path every request is passed on (``server.http.forward.pass_on``:
the loop guard, the holder's address), and the socket is answered with the holder's answer.

They go as the client: with the socket's session token as a bearer token. A socket that
connected with the session cookie proved its CSRF token then, so its token goes on the same
way (a request between servers is no browser's). The holder authenticates and authorizes the
request again, as if the client had called it; no server vouches for another's users.
"""

from __future__ import annotations

import json
from urllib.parse import quote, urlencode

from boxes import codes
from boxes.errors import Conflict, Unavailable
from catalog import ObjectType, Subject
from server.http.api import PREFIX
from server.http.forward import pass_on
from server.realtime.delivery import REPLAY_PAGE, role_mask


class Refused(Exception):
    """The holder's error answer (``{"error": ...}``, the shape of a local refusal)."""

    def __init__(self, answer: dict) -> None:
        super().__init__(answer["error"]["code"])
        self.answer = answer


def call(svc, sid: str, method: str, path: str, payload=None) -> dict:
    """The holder's JSON answer to ``path`` (under the API's prefix) asked as socket ``sid``'s
    client; raises its refusal as ``Refused``, and RUNTIME_UNAVAILABLE if no server holds
    the runtime or its answer is none of the API's."""
    headers = {
        "Authorization": f"Bearer {svc.connections.token(sid)}",
        "Content-Type": "application/json",
        "Accept": "application/json",
    }
    body = None if payload is None else json.dumps(payload).encode()
    passed = pass_on(svc, method, PREFIX + path, headers, body)
    if passed is None:
        raise Unavailable(code=codes.RUNTIME_UNAVAILABLE)
    try:
        answer = json.loads(passed.body)
    except ValueError as err:
        raise Unavailable(code=codes.RUNTIME_UNAVAILABLE) from err
    if passed.status >= 400:
        raise Refused(answer)
    return answer


def ingest(svc, sid: str, stream: str, tuples: list) -> dict:
    """Append through the holder's ``POST /streams/NAME/tuples``: its acknowledgement (the
    tuples are durable in its log) or its refusal, as the ack."""
    try:
        return call(svc, sid, "POST", f"/streams/{quote(stream, safe='')}/tuples", tuples)
    except Refused as refused:
        return refused.answer


def check_relayed(svc, output: str) -> None:
    """Refuse ``output`` here if its diagram runs rewritten (docs/rewrite.md): a reader's
    rewrite may need a variant, which only the holder runs and which is not relayed, and the
    holder relays no batch of such an output (REWRITTEN_ON_HOLDER)."""
    snapshot = svc.catalog.core.snapshot
    found = snapshot.find(ObjectType.OUTPUT, output)
    if found is None or found.parent_id is None:
        return  # the SUBSCRIBE check already refused it
    if svc.catalog.rewrites.of(snapshot.objects[found.parent_id]) is not None:
        raise Conflict(code=codes.REWRITTEN_ON_HOLDER, output=output)


def subscribe_from(svc, sid: str, subject: Subject, output: str, start: int) -> dict:
    """Subscribe here, replaying first what the holder's result log holds from ``start`` on,
    read through its ``GET /outputs/NAME/results`` (rows the holder filtered with the
    client's permissions), then the batches relayed to this server (``Delivery.catch_up``:
    no gap, nothing twice); the holder's refusal of the first read subscribes nothing."""
    path = f"/outputs/{quote(output, safe='')}/results?"

    def page(route: str, at: int) -> tuple[list, int]:
        got = call(svc, sid, "GET", path + urlencode({"from": at, "limit": REPLAY_PAGE}))
        return policy_runs(svc, got), got["next"]

    try:
        end = svc.delivery.catch_up(sid, subject, output, start, page)
    except Refused as refused:
        return refused.answer
    return {"subscribed": output, "replayed_to": end}


def policy_runs(svc, got: dict) -> list[tuple[int | None, list]]:
    """The holder's page as ``Delivery.catch_up`` takes it: runs of tuples, each with the bits
    (this catalog's) of the session's roles its policy lets read it, so each run follows its
    ``policy`` event as in a local replay; one run without a policy on an ungoverned output."""
    if "policies" not in got:
        return [(None, got["tuples"])]
    snapshot, runs, at = svc.catalog.core.snapshot, [], 0
    for run in got["policies"]:
        runs.append((role_mask(snapshot, run["roles"]), got["tuples"][at : at + run["tuples"]]))
        at += run["tuples"]
    return runs
