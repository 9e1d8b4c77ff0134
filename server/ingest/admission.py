"""The one ingestion path: HTTP batches, socket.io ``ingest`` events and the demo feeds all
come through :func:`ingest`, so the size limit and the rate limit are checked alike; WRITE is the
policy table's (``catalog/policy.py``), checked before, by the guard or by the demo feed.

A batch is answered only after the runtime's log has made it durable; the answer carries the
arrival sequence number of its first tuple.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from boxes import codes
from boxes.errors import Denied, InvalidInput, TooLarge
from catalog import ObjectType, Subject
from catalog.authorizer import playing
from catalog.clearance import Admission
from server.ingest.here import here
from server.ingest.log import IngestLog
from server.ingest.punctuated import Governance

# A sender's level refused at admission, audited like any other denial.
LEVEL_REFUSALS = (codes.LEVEL_NO_ORGANISATION, codes.LEVEL_NOT_CLEARED)


def admission(svc, subject: Subject, stream: str) -> Admission:
    """How each tuple of this batch gets its Chinese-Wall level (``catalog.clearance``): the
    stream's company, or on a multilevel stream the level the tuple states in ``_level``
    (dominated by the sender's clearance, its active roles' now, or its organisation) or
    else the sender's organisation. Decided here, once per batch, from the catalog as it is
    now, and written durably with it."""
    snapshot = svc.catalog.core.snapshot
    obj = snapshot.find(ObjectType.STREAM, stream)
    clearance = snapshot.levels.clearance(playing(subject, snapshot))
    return snapshot.levels.admission(None if obj is None else obj.id, subject.user_id, clearance)


def governance(svc, log: IngestLog, stream: str) -> Governance | None:
    """The catalog's word on a stream sps govern (None: they do not), as it is at admission:
    its fields (as ``log`` has them), its tuple identifier field, every role's bit and the
    server's own policy."""
    snapshot = svc.catalog.core.snapshot
    obj = snapshot.find(ObjectType.STREAM, stream)
    if obj is None or obj.id not in snapshot.governed:
        return None
    fields = tuple(log.schema(stream).names)
    server = snapshot.server_policies.get(obj.id)
    return Governance(fields, snapshot.role_bits, snapshot.governed[obj.id], server)


def ingest(svc, subject: Subject, stream: Any, read: Callable[[], Any]) -> dict:
    """Append the tuples ``read()`` gives to input ``stream``, durably, for a caller the policy
    table has already allowed (``streams.append``, ``socket.ingest``: WRITE on the stream). The
    body is read only here, after that check, so a caller without WRITE learns nothing from how
    its body would have been judged."""
    tuples = read()
    if not isinstance(tuples, list):
        raise InvalidInput("tuples must be a list of objects", code=codes.INVALID_BODY)
    limit = svc.limits.max_batch_tuples
    if len(tuples) > limit:
        raise TooLarge(
            f"{len(tuples)} tuples in one batch; at most {limit} are accepted",
            code=codes.BATCH_TOO_LARGE,
            details={"limit": limit},
        )
    svc.rate.take(subject.session_id, len(tuples))
    levels = admission(svc, subject, stream)
    runtime = here(svc).needed()
    try:
        receipt = runtime.append(stream, tuples, levels, governance(svc, runtime.log, stream))
    except Denied as refused:
        if refused.code in LEVEL_REFUSALS:
            svc.catalog.core.log(subject, "ingest", f"stream:{stream}", False, str(refused))
        raise
    return {"stream": receipt.stream, "first_seq": receipt.first_seq, "count": receipt.count}
