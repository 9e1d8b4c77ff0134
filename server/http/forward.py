"""Ingestion and result reads through any server (docs/deploy.md "The runtime lease"): a server
that does not hold the runtime passes an append, or a read of an output's result log or recent
results, on to the one that does, and answers with its answer.

Only the holder writes the ingestion logs, so only its acknowledgement means "durable"; only it
has the result logs. The
request goes on as the client sent it, with the client's own credentials (its bearer token, or
its session cookie and CSRF token): the holder authenticates and authorizes it again exactly as
if the client had called it, and no server vouches for another's users. The holder's address is
the one its lease records. A request already passed on once is not passed on again (a holder's
address that points at another standby would otherwise loop): it is refused instead.
"""

from __future__ import annotations

import urllib.error
import urllib.request

from flask import Response, request

from boxes import codes
from boxes.errors import Unavailable
from server.control.lease import LEASE
from server.ingest.admission import standing_by

FORWARDED = "X-Sluice-Forwarded"
PASSED_ON = ("Authorization", "Cookie", "X-CSRF-Token", "Content-Type", "Accept")
TIMEOUT = 60.0  # seconds: an append is answered once durable, which can take a group commit


def held_elsewhere(svc) -> bool:
    """Whether the runtime, if any server runs it, runs on another: this server waits to take
    it over, or is configured without one."""
    return standing_by(svc) or (svc.lease is None and svc.runtime is None)


def forward(svc) -> Response | None:
    """This request, answered by the runtime lease's holder; None if no server holds it (the
    request is then this server's to refuse)."""
    holder = svc.catalog.leases.holder(LEASE)
    if holder is None or not holder.address:
        return None
    if request.headers.get(FORWARDED):
        raise Unavailable(code=codes.RUNTIME_UNAVAILABLE)
    headers = {k: v for k in PASSED_ON if (v := request.headers.get(k)) is not None}
    query = request.query_string.decode("latin-1")
    passed = urllib.request.Request(
        holder.address + request.path + (f"?{query}" if query else ""),
        data=request.get_data(cache=True),
        headers={**headers, FORWARDED: "1"},
        method=request.method,
    )
    try:
        with urllib.request.urlopen(passed, timeout=TIMEOUT) as answer:  # noqa: S310 (http(s) only)
            return _response(answer.status, answer.headers, answer.read())
    except urllib.error.HTTPError as refused:  # the holder's own error answer, as it gave it
        return _response(refused.code, refused.headers, refused.read())
    except (urllib.error.URLError, OSError) as err:
        raise Unavailable(code=codes.RUNTIME_UNAVAILABLE) from err


def _response(status: int, headers, body: bytes) -> Response:
    kept = {k: headers[k] for k in ("Content-Type", "Retry-After") if headers.get(k)}
    return Response(body, status=status, headers=kept)
