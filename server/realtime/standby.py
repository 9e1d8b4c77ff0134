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
import logging
import threading
from urllib.parse import quote, urlencode

from boxes import codes
from boxes.errors import Conflict, SluiceError, Unavailable
from catalog import Subject
from catalog.names import public_of
from catalog.snapshot import Snapshot
from server.control.rewrites import reads_rewritten, rewrite_key
from server.http.api import PREFIX
from server.http.forward import pass_on
from server.ingest.here import here
from server.realtime.delivery import Runs
from server.realtime.replay import REPLAY_PAGE

log = logging.getLogger(__name__)


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


class RewriteGuard:
    """Who here reads a relayed batch of a rewritten diagram's output: a subscriber whose own
    policies rewrite the diagram into the document the batch was computed under
    (``server.control.rewrites.reads_rewritten``), with the catalog as it is at that batch.
    Answers are kept per reader and rewrite until the catalog changes, so a batch costs a
    lookup per subscriber and a change one rewrite each."""

    def __init__(self, catalog) -> None:
        self.catalog = catalog
        self._lock = threading.Lock()
        self._snapshot: Snapshot | None = None
        self._answers: dict[tuple, SluiceError | None] = {}

    def check(self, subject: Subject, output: str, rewrite: str, snapshot: Snapshot) -> None:
        """Refuse ``subject`` a batch computed under ``rewrite`` unless ``snapshot`` (the
        batch's) lets it read it."""
        key = (subject.user_id, subject.roles, output, rewrite)
        with self._lock:
            if snapshot is not self._snapshot:
                self._snapshot, self._answers = snapshot, {}
            answers = self._answers
        if key not in answers:
            try:
                reads_rewritten(self.catalog, subject, output, rewrite, snapshot)
                answers[key] = None
            except SluiceError as err:
                answers[key] = err
        refusal = answers[key]
        if refusal is not None:
            raise refusal


def route_of(svc, sid: str, subject: Subject, output: str) -> str:
    """The runtime output socket ``sid``'s client reads for ``output`` (a key:
    ``catalog.names``) here: the output itself
    unless its diagram runs rewritten and the client's policies rewrite it otherwise; then the
    variant the holder runs for them, asked for as the client (``POST
    /outputs/NAME/variant``) and kept running while it is read here (``Keepalive``). Its
    batches, relayed, reach the client only while its rewrite is theirs (``RewriteGuard``)."""
    rewrite = rewrite_key(svc.catalog, output)
    if rewrite is None:
        return output
    try:
        svc.delivery.check_relayed(subject, output, rewrite, svc.catalog.core.current())
        return output
    except Conflict as refused:
        if refused.code is not codes.REWRITE_CHANGED:
            raise
    return variant(svc, sid, output)


def variant(svc, sid: str, output: str) -> str:
    """Ask the holder, as socket ``sid``'s client, for the runtime output it reads for the
    output whose key is ``output`` (the holder tells the output itself by its public name);
    its refusal raised as ``Refused``."""
    name = public_of(output)
    route = call(svc, sid, "POST", f"/outputs/{quote(name, safe='')}/variant")["route"]
    return output if route == name else route


class Keepalive:
    """Asks the holder again for each variant read here, every ``interval`` seconds, as one
    of its readers, so that it does not stop after the linger while read through this
    server."""

    def __init__(self, svc, interval: float) -> None:
        self.svc, self.interval = svc, interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="variant-keepalive", daemon=True)

    def tick(self) -> None:
        for route, (output, sid) in self.svc.delivery.variant_readers().items():
            try:
                variant(self.svc, sid, output)
            except (Refused, SluiceError):
                log.warning("variant %s of %s: the holder refused to keep it", route, output)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            if here(self.svc).elsewhere:
                self.tick()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def subscribe(svc, sid: str, subject: Subject, output: str) -> dict:
    """Subscribe here to the batches relayed to this server of the output whose key is
    ``output``, on the route ``route_of`` gives; the holder's refusal of a variant subscribes
    nothing."""
    try:
        svc.delivery.subscribe(sid, subject, output, route_of(svc, sid, subject, output))
    except Refused as refused:
        return refused.answer
    return {"subscribed": public_of(output)}


def subscribe_from(
    svc, sid: str, subject: Subject, output: str, start: int, log: str | None
) -> dict:
    """Subscribe here, replaying first what the holder's result log holds from ``start`` on,
    read through its ``GET /outputs/NAME/results`` (rows the holder filtered with the
    client's permissions, from the client's variant's log if it reads one), then the batches
    relayed to this server (``Delivery.catch_up``: no gap, nothing twice); the holder's
    refusal of the first read subscribes nothing (``RESULTS_RESTARTED`` for a position of
    a log other than ``log``, if given)."""
    path = f"/outputs/{quote(public_of(output), safe='')}/results?"
    of_log = {} if log is None else {"log": log}

    def page(route: str, at: int) -> tuple[list, dict]:
        query = {"from": at, "limit": REPLAY_PAGE, **of_log}
        got = call(svc, sid, "GET", path + urlencode(query))
        return policy_runs(got), {"next": got["next"], "log": got["log"]}

    try:
        route = route_of(svc, sid, subject, output)
        end = svc.delivery.catch_up(sid, subject, output, start, page, route)
    except Refused as refused:
        return refused.answer
    return {"subscribed": public_of(output), "replayed_to": end}


def policy_runs(got: dict) -> Runs:
    """The holder's page as ``Delivery.catch_up`` takes it: runs of tuples, each with the names
    of the session's roles its policy lets read it (the holder read them from the snapshot it
    filtered the page on), so each run follows its ``policy`` event as in a local replay; one
    run without a policy on an ungoverned output."""
    if "policies" not in got:
        return [(None, got["tuples"])]
    runs: Runs = []
    at = 0
    for run in got["policies"]:
        runs.append((tuple(run["roles"]), got["tuples"][at : at + run["tuples"]]))
        at += run["tuples"]
    return runs
