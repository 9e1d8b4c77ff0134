"""Ingestion and result reads through any server (docs/deploy.md "The runtime lease"): a server
that does not hold the runtime passes an append, or a read of an output's result log or recent
results, on to the one that does, and answers with its answer.

Only the holder writes the ingestion logs, so only its acknowledgement means "durable"; only it
has the result logs. The request goes on as the client sent it, with the client's own
credentials (its bearer token, or its session cookie and CSRF token): the holder authenticates
and authorizes it again exactly as if the client had called it, and no server vouches for
another's users. The holder's address is the one its lease records. A request already passed on
once is not passed on again (a holder's address that points at another standby would otherwise
loop): it is refused instead. ``pass_on`` is that one way for REST (``forwarded``, which a
route asks for with ``guarded(forward=True)``) and socket.io (``server.realtime.standby``) alike.

Requests go over one pool of keep-alive connections per process (urllib3's ``PoolManager``,
safe to share between threads), not a new connection each: a standby's appends cost a round
trip, not a TCP (and TLS) handshake too. The pool keeps no cookies (one client's session must
never travel with another's request) and reads no ``.netrc`` or proxy settings; it never retries
(an append is not idempotent) nor follows a redirect (the holder's answer goes back as given).
Timeouts (docs/deploy.md): ``CONNECT_TIMEOUT`` to reach the holder, ``TIMEOUT`` for its answer.
"""

from __future__ import annotations

from dataclasses import dataclass

import urllib3
from flask import Response, request

from boxes import codes
from boxes.errors import Unavailable
from server.control.lease import LEASE
from server.ingest.here import here

FORWARDED = "X-Sluice-Forwarded"
PASSED_ON = ("Authorization", "Cookie", "X-CSRF-Token", "Content-Type", "Accept")
TIMEOUT = 60.0  # seconds: an append is answered once durable, which can take a group commit
CONNECT_TIMEOUT = 5.0  # seconds: a holder that does not accept a connection by then is down
POOL_SIZE = 16  # kept-alive connections per holder; more may open at once, but are not kept
_POOL = urllib3.PoolManager(
    maxsize=POOL_SIZE,
    timeout=urllib3.Timeout(connect=CONNECT_TIMEOUT, read=TIMEOUT),
    retries=False,
)


def forwarded(svc) -> Response | None:
    """This request, answered by the runtime lease's holder if the runtime is held elsewhere
    (``server.ingest.here``); None if it is here, or no server holds it (the request is then
    this server's to answer or refuse). Routes ask for it with ``guarded(forward=True)``."""
    if not here(svc).elsewhere:
        return None
    query = request.query_string.decode("latin-1")
    path = request.path + (f"?{query}" if query else "")
    passed = pass_on(svc, request.method, path, request.headers, request.get_data(cache=True))
    return None if passed is None else Response(passed.body, passed.status, passed.headers)


@dataclass(frozen=True)
class Answer:
    """The holder's answer, as it gave it (less the headers that are its own business)."""

    status: int
    headers: dict[str, str]
    body: bytes


def pass_on(svc, method: str, path: str, headers, body: bytes | None) -> Answer | None:
    """The holder's answer to a request for ``path`` (with its query) with the client's
    ``headers`` (those in ``PASSED_ON`` go on) and ``body``; None if no server holds the
    runtime. A request that was passed on already is refused (RUNTIME_UNAVAILABLE), as is
    every request when the holder cannot be reached."""
    holder = svc.catalog.leases.holder(LEASE)
    if holder is None or not holder.address:
        return None
    if headers.get(FORWARDED):
        raise Unavailable(code=codes.RUNTIME_UNAVAILABLE)
    sent = {k: v for k in PASSED_ON if (v := headers.get(k)) is not None}
    try:
        answer = _POOL.request(
            method,
            holder.address + path,
            body=body,
            headers={**sent, FORWARDED: "1"},
            redirect=False,
        )
    except (urllib3.exceptions.HTTPError, OSError) as err:
        raise Unavailable(code=codes.RUNTIME_UNAVAILABLE) from err
    # an error status is the holder's own answer, passed back as it gave it
    return _answer(answer.status, answer.headers, answer.data)


def _answer(status: int, headers, body: bytes) -> Answer:
    kept = {k: headers[k] for k in ("Content-Type", "Retry-After") if headers.get(k)}
    return Answer(status, kept, body)
