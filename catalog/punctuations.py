"""Which input streams security punctuations govern, and each one's tuple identifier field.

A governed stream's tuples carry a policy label (``server/ingest``), decided from the sps its
writers send in it: whoever holds WRITE on it then decides who reads its new tuples (within
READ_TUPLE, which still applies), so turning it on or off is for the stream's owner role or an
administrator (``catalog/policy.py``), in one audited transaction. Each role's label bit is
given when the role is made (``repository.insert_role``, never again): ``Snapshot.role_bits``;
a governed diagram's labels have room for the bits there were when it was deployed
(``role_words``, recorded so a restart keeps its layout and checkpoint).

Whether sps govern a stream is fixed while any diagram reads it (``SP_STREAM_IN_USE``): a
diagram's labels carry the policy words only if its streams were governed when it was made
or deployed (``server.control.diagrams.resolved``), and a diagram reading its output too.

>>> cat.punctuations.set_governance(joe, "in1", True, "price")
{'governed': True, 'tid_field': 'price'}
>>> cat.punctuations.governance(joe, "in1")
{'governed': True, 'tid_field': 'price'}
"""

from __future__ import annotations

import json

from boxes import codes
from boxes.errors import Conflict, InvalidInput
from boxes.punctuations.model import INTERSECT, UNION, ServerPolicy, Sp, server_sp_from_json
from boxes.punctuations.words import width
from catalog import policy, repository
from catalog.core import Core
from catalog.model import CatalogObject, ObjectType, Subject
from catalog.objects import schema_of
from catalog.snapshot import Snapshot

EVENT = "punctuations"
RULE = policy.OPERATIONS["streams.set_punctuations"]
SERVER_EVENT = "server_policy"
SERVER_RULE = policy.OPERATIONS["streams.set_server_policy"]
SERVER_SPS_MAX = 256


def role_words_of(snapshot: Snapshot) -> int:
    """The words of policy label the catalog's roles need now (one up to bit 63)."""
    return width(max(snapshot.role_bits.values(), default=-1) + 1)


def governance_of(snapshot: Snapshot, stream: CatalogObject) -> dict:
    governed = stream.id in snapshot.governed
    return {"governed": governed, "tid_field": snapshot.governed.get(stream.id)}


class Punctuations:
    def __init__(self, core: Core) -> None:
        self.core = core

    def governance(self, subject: Subject, stream: str) -> dict:
        """Whether sps govern ``stream`` (one the session may view) and its identifier field."""
        snapshot = self.core.snapshot
        return governance_of(snapshot, self.core.find(subject, ObjectType.STREAM, stream, snapshot))

    def set_governance(
        self, subject: Subject, stream: str, governed: bool, tid_field: str | None = None
    ) -> dict:
        """Govern an input stream by its sps (``tid_field``: a field of its schema, or None), or
        stop. Tuples already logged keep the label they were admitted with."""
        core = self.core
        with core.store.lock:
            snapshot = core.snapshot
            obj = core.find(subject, ObjectType.STREAM, stream, snapshot)
            core.authorize(subject, RULE, {"name": stream}, EVENT)
            if obj.kind != "input":
                raise _refuse(stream, "it is not an input stream")
            readers = sorted(
                o.name
                for o in snapshot.objects.values()
                if o.type is ObjectType.DIAGRAM and obj.id in o.refs
            )
            if readers and governed != (obj.id in snapshot.governed):
                raise Conflict(
                    code=codes.SP_STREAM_IN_USE, name=stream, diagrams=", ".join(readers[:5])
                )
            fields = schema_of(obj, snapshot)["fields"]
            if not governed and tid_field is not None:
                raise _refuse(stream, "a stream no sp governs has no tuple identifier field")
            if tid_field is not None and tid_field not in fields:
                raise _refuse(stream, f"its schema has no field {tid_field[:64]!r}")
            before = governance_of(snapshot, obj)
            after = {"governed": governed, "tid_field": tid_field}
            with core.change() as conn:
                repository.set_governed(
                    conn, obj.id, governed, tid_field, subject.user_name, core.clock()
                )
                core.log(
                    subject,
                    EVENT,
                    f"stream:{stream}",
                    True,
                    "owner or administrator",
                    conn,
                    old=before,
                    new=after,
                )
            return after

    def role_words(self, diagram: CatalogObject) -> int | None:
        """The role words ``diagram`` was last deployed with (None: it was not, as governed,
        since they are recorded: one word, as every plan had before)."""
        with self.core.store.reader() as conn:
            return repository.get_role_words(conn, diagram.id)

    def record_role_words(self, diagram: CatalogObject, words: int) -> None:
        """Its labels' layout, part of its deploy (``server.control.diagrams.run``)."""
        with self.core.store.transaction() as conn:
            repository.put_role_words(conn, diagram.id, words)

    def server_policy(self, subject: Subject, stream: str) -> dict:
        """The server's own sps for a governed stream (administrators): ``None`` for none."""
        snapshot = self.core.require_admin(subject, SERVER_EVENT)
        obj = self.core.find(subject, ObjectType.STREAM, stream, snapshot)
        return server_policy_of(snapshot, obj)

    def set_server_policy(
        self, subject: Subject, stream: str, items: list | None, combine: str = INTERSECT
    ) -> dict:
        """Set (a list of sps, in their JSON form without ``ts`` and ``sn``) or remove (None)
        the server's policy of a governed stream, in one audited transaction. It combines with
        what the provider's mutable sps grant the tuples admitted from now on (section 4.2):
        by ``intersect``, a role reads a field so granted only if this policy grants it too
        (``[]`` leaves only the immutable grants); by ``union``, a role also reads what this
        policy grants, on fields no immutable sp grants. Every denial stays either way."""
        if combine not in (INTERSECT, UNION):
            raise InvalidInput(
                code=codes.SP_INVALID, part="combine", reason="is 'intersect' or 'union'"
            )
        core = self.core
        with core.store.lock:
            snapshot = core.snapshot
            obj = core.find(subject, ObjectType.STREAM, stream, snapshot)
            core.authorize(subject, SERVER_RULE, {"name": stream}, SERVER_EVENT)
            if obj.id not in snapshot.governed:
                raise _refuse(stream, "no sp governs it (PUT /streams/NAME/punctuations first)")
            sps = None if items is None else server_sps(items)
            before = server_policy_of(snapshot, obj)
            new = None if sps is None else ServerPolicy(sps, combine == UNION)
            after = _shown(new)
            with core.change() as conn:
                repository.set_server_policy(
                    conn, obj.id, _text(new), subject.user_name, core.clock()
                )
                core.log(
                    subject,
                    SERVER_EVENT,
                    f"stream:{stream}",
                    True,
                    "administrator",
                    conn,
                    old=before,
                    new=after,
                )
            return after


def server_sps(items: list) -> tuple[Sp, ...]:
    """A server policy's sps from their JSON form (SP_INVALID naming the item); they carry
    no timestamp or sequence number, which order a provider's policies, not the server's."""
    if not isinstance(items, list) or len(items) > SERVER_SPS_MAX:
        raise InvalidInput(
            code=codes.SP_INVALID,
            part="server_policy",
            reason=f"is a list of at most {SERVER_SPS_MAX} sps",
        )
    sps = []
    for n, item in enumerate(items, 1):
        try:
            sps.append(server_sp_from_json(item, n))
        except InvalidInput as err:
            part, reason = err.params.get("part", "sp"), err.params.get("reason", err.message)
            raise InvalidInput(
                code=codes.SP_INVALID, part=f"server_policy[{n - 1}], {part}", reason=str(reason)
            ) from None
    return tuple(sps)


def _stored(sp: Sp) -> dict:
    out = sp.to_json()
    del out["ts"], out["sn"]
    return out


def server_policy_of(snapshot: Snapshot, stream: CatalogObject) -> dict:
    return _shown(snapshot.server_policies.get(stream.id))


def _shown(policy: ServerPolicy | None) -> dict:
    """``{"server_policy": [sp, ...] or None, "combine": "intersect" or "union"}``."""
    if policy is None:
        return {"server_policy": None, "combine": INTERSECT}
    return {"server_policy": [_stored(sp) for sp in policy.sps], "combine": policy.combine}


def _text(policy: ServerPolicy | None) -> str | None:
    """As stored: the sps' list, inside ``{"combine": "union", "sps": [...]}`` for a union."""
    if policy is None:
        return None
    sps = [_stored(sp) for sp in policy.sps]
    return json.dumps({"combine": UNION, "sps": sps} if policy.union else sps)


def _refuse(stream: str, reason: str) -> InvalidInput:
    return InvalidInput(code=codes.SP_STREAM_INVALID, name=stream, reason=reason)
