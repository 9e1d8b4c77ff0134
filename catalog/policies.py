"""Administering ASSIST access-control policies (seed 002) and users' attributes.

A policy (``boxes.rewrite.policy``) grants a role a privilege on streams, bounded by a predicate
that may read the deployer's attributes (``self.NAME``: a port's boundary, a company's ships).
It is checked whole over its streams' schemas before anything is stored (``check_on``).
Administrators only (CHANGE_SYSTEM); each change one transaction of :meth:`Core.change` (the
snapshot's ``policies`` and ``attributes`` are swapped in whole), audited in it with the old
and new value, like grants and levels. The server re-checks deployed rewrites after each change
(``server.control.rewrites``).

>>> cat.policies.put(joe, [{"name": "p", "role": "ADMIN", "streams": {"in1": "*"},
...                         "where": "price < self.ceiling", "privilege": "read"}])
['p']
>>> cat.policies.put(joe, [{"name": "q", "role": "ADMIN", "streams": {"in1": ["qty"]},
...                         "privilege": "read"}])
Traceback (most recent call last):
boxes.errors.InvalidInput: [POLICY_INVALID] policy q: 'in1' has no field 'qty'
>>> cat.policies.set_attributes(joe, "joe", {"ceiling": 100})
{'ceiling': 100}
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from boxes import codes
from boxes.errors import Conflict, InvalidInput, NotFound
from boxes.rewrite.policy import Policy, check_on, invalid, policies_from, policy_item
from boxes.rewrite.policy import Subject as RewriteSubject
from boxes.types import FIELD_NAME, Schema, parse_schema
from catalog import repository
from catalog.accounts import role_named, user_named
from catalog.core import Core
from catalog.model import ObjectType, Subject
from catalog.objects import schema_of
from catalog.snapshot import Snapshot

EVENT = "policies"
MAX_ATTRIBUTES = 64
MAX_LIST = 10_000
MAX_TEXT = 4_096
# A policy's name is any text the model accepts, within this: it is a path segment of the API.
POLICY_NAME = re.compile(r"[^\x00-\x1f\x7f/]{1,128}")


def _attribute(name: object, value: object) -> Any:
    """``value`` if it is a scalar (text, number, boolean) or a list of scalars."""
    if not isinstance(name, str) or not FIELD_NAME.match(name):
        raise InvalidInput(code=codes.ATTRIBUTE_INVALID, name=str(name)[:64], reason="bad name")
    items = value if isinstance(value, list) else [value]
    if len(items) > MAX_LIST:
        raise InvalidInput(
            code=codes.ATTRIBUTE_INVALID, name=name, reason=f"at most {MAX_LIST} items"
        )
    for item in items:
        ok = (
            isinstance(item, (bool, int))
            or (isinstance(item, float) and math.isfinite(item))
            or (isinstance(item, str) and len(item) <= MAX_TEXT)
        )
        if not ok:
            raise InvalidInput(
                code=codes.ATTRIBUTE_INVALID,
                name=name,
                reason="a value is text, a number, true/false, or a list of those",
            )
    return value


def _input_schemas(snapshot: Snapshot, names: set[str]) -> dict[str, Schema]:
    """The schemas of those ``names`` that are input streams (a policy protects those)."""
    found = {}
    for name in names:
        stream = snapshot.find(ObjectType.STREAM, name)
        if stream is not None and stream.kind == "input":
            schema, problems = parse_schema(schema_of(stream, snapshot), name)
            assert schema is not None and not problems, "a stored schema is valid"
            found[name] = schema
    return found


class Policies:
    def __init__(self, core: Core) -> None:
        self.core = core

    def _admin(self, subject: Subject) -> Snapshot:
        return self.core.require_admin(subject, EVENT)

    def all(self, subject: Subject) -> list[dict[str, Any]]:
        """Every policy, by name, in its YAML form."""
        return [policy_item(p) for p in self._admin(subject).policies]

    def put(self, subject: Subject, items: Sequence[Any], replace: bool = False) -> list[str]:
        """Add policies (the YAML form's items), all or none; a name already stored is
        DUPLICATE_NAME unless ``replace``. Every role they name must exist."""
        policies = policies_from(list(items))
        for p in policies:
            if not POLICY_NAME.fullmatch(p.name):
                raise invalid(p.name[:64], "a name is 1 to 128 characters, no '/' or control")
        core = self.core
        with core.store.lock:
            snapshot = self._admin(subject)
            schemas = _input_schemas(snapshot, {s for p in policies for s in p.stream_names})
            for p in policies:
                role_named(snapshot, p.role)
                check_on(p, schemas)
            stored = {p.name: p for p in snapshot.policies}
            with core.change() as conn:
                for p in policies:
                    if p.name in stored and not replace:
                        raise Conflict(code=codes.DUPLICATE_NAME, what="policy", name=p.name)
                    item = policy_item(p)
                    text = json.dumps(item, sort_keys=True)
                    repository.put_policy(
                        conn, p.name, p.role, text, subject.user_name, core.clock()
                    )
                    old = stored.get(p.name)
                    self._log(subject, p, conn, old=old and policy_item(old), new=item)
        return [p.name for p in policies]

    def delete(self, subject: Subject, name: str) -> None:
        core = self.core
        with core.store.lock:
            snapshot = self._admin(subject)
            found = [p for p in snapshot.policies if p.name == name]
            if not found:
                raise NotFound(what="policy", name=str(name)[:64])
            with core.change() as conn:
                repository.delete_policy(conn, name)
                self._log(subject, found[0], conn, old=policy_item(found[0]), new=None)

    def _log(self, subject: Subject, p: Policy, conn, **details) -> None:
        self.core.log(subject, EVENT, f"policy:{p.name}", True, "administrator", conn, **details)

    def attributes(self, subject: Subject, user: str) -> dict[str, Any]:
        snapshot = self._admin(subject)
        return dict(snapshot.attributes.get(user_named(snapshot, user).id, {}))

    def set_attributes(self, subject: Subject, user: str, values: Mapping[str, Any]) -> dict:
        """Replace a user's attributes (``{}``: none)."""
        if not isinstance(values, Mapping) or len(values) > MAX_ATTRIBUTES:
            raise InvalidInput(
                code=codes.ATTRIBUTE_INVALID, name="*", reason=f"at most {MAX_ATTRIBUTES}"
            )
        checked = {k: _attribute(k, v) for k, v in values.items()}
        core = self.core
        with core.store.lock:
            snapshot = self._admin(subject)
            found = user_named(snapshot, user)
            with core.change() as conn:
                repository.set_attributes(
                    conn, found.id, {k: json.dumps(v) for k, v in checked.items()}
                )
                core.log(
                    subject,
                    EVENT,
                    f"user:{user}",
                    True,
                    "administrator",
                    conn,
                    old=dict(snapshot.attributes.get(found.id, {})),
                    new=checked,
                )
        return checked


def rewrite_subject(snapshot: Snapshot, user_id: int, roles: frozenset[str]) -> RewriteSubject:
    """Who a rewrite is for: the roles given (a session's active ones) and the user's
    attributes as they are in ``snapshot``."""
    return RewriteSubject(roles, dict(snapshot.attributes.get(user_id, {})))


def protected(snapshot: Snapshot) -> frozenset[str]:
    """The streams some policy names: a diagram reading one is rewritten at deploy."""
    return frozenset(s for p in snapshot.policies for s in p.stream_names)
