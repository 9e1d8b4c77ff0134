"""The catalog's front door: open a database and get the parts the server uses.

>>> from catalog.bootstrap import add_admin
>>> cat = Catalog.open("sqlite:///:memory:", bcrypt_rounds=4)
>>> add_admin(cat, "joe", "correct horse battery")
True
>>> token, joe = cat.sessions.login("joe", "correct horse battery")
>>> _ = cat.objects.add_schema(joe, "trade", {"fields": {"price": "double"}})
>>> _ = cat.objects.add_stream(joe, "in1", "trade")
>>> [o.name for o in cat.objects.lookup(joe)]
['system', 'trade', 'in1', 'aggregate', 'filter', 'join', 'map', 'union']
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from boxes.errors import Denied
from catalog import box_types
from catalog.accounts import Accounts
from catalog.audit import Entry, query
from catalog.authorizer import decide_any
from catalog.core import Core, Settings
from catalog.dashboards import Dashboards
from catalog.grants import Grants
from catalog.leases import Leases
from catalog.levels import Levels
from catalog.model import CatalogObject, ObjectType, Subject
from catalog.objects import Objects
from catalog.operators import Operators
from catalog.policies import Policies
from catalog.policy import OPERATIONS, On
from catalog.punctuations import Punctuations
from catalog.rewrites import Rewrites
from catalog.sessions import Sessions
from catalog.store import Store, open_store
from catalog.system import SystemSettings
from catalog.versions import Versions


class Catalog:
    def __init__(
        self, store: Store, settings: Settings = Settings(), clock: Callable[[], float] = time.time
    ) -> None:
        self.core = Core(store, settings, clock)
        self.sessions = Sessions(self.core)
        self.accounts = Accounts(self.core)
        self.operators = Operators(self.core)
        self.objects = Objects(self.core, self.operators)
        self.grants = Grants(self.core)
        self.system = SystemSettings(self.core)
        self.levels = Levels(self.core)
        self.punctuations = Punctuations(self.core)
        self.versions = Versions(self.core)
        self.policies = Policies(self.core)
        self.rewrites = Rewrites(self.core)
        self.leases = Leases(self.core)
        self.dashboards = Dashboards(self.core)
        box_types.add_missing(self.core)

    @classmethod
    def open(
        cls,
        url: str,
        *,
        bcrypt_rounds: int = 12,
        session_ttl: float = 8 * 3600.0,
        clock: Callable[[], float] = time.time,
    ) -> Catalog:
        settings = Settings(bcrypt_rounds, session_ttl)
        return cls(open_store(url), settings, clock)

    def on_change(self, listener: Callable[[], None]) -> None:
        """See :meth:`catalog.core.Core.on_change`."""
        self.core.on_change(listener)

    def authorize(
        self, subject: Subject | None, operation: str, args: Mapping[str, Any] | None = None
    ) -> None:
        """Allow ``operation`` as ``catalog.policy.OPERATIONS`` says, with the objects its
        ``args`` name; an operation missing from the table is refused (deny by default)."""
        rule = OPERATIONS.get(operation)
        if rule is None:
            self.core.log(subject, str(operation)[:64], None, False, "not in the policy table")
            raise Denied("this operation is not allowed to anyone")
        self.core.authorize(subject, rule, args or {}, operation)

    def capabilities(
        self, subject: Subject, type_: object = None, name: object = None
    ) -> dict[str, bool]:
        """Whether the session may run each operation whose rule names no object but the
        system (administration, ``ADD``), as the guard would decide it now; given an object
        (one it may not view is NOT_FOUND, as everywhere), the operations on that object too
        (``streams.delete``, ``permissions.of``). The pages ask this before offering the
        admin console, a palette or a button. Asking is not trying, so nothing is audited;
        probing a route instead records a denial for every session refused."""

        def answer(snapshot) -> dict[str, bool]:
            self.core.valid(subject, snapshot)
            asked = self.core.find(subject, type_, name, snapshot) if type_ else None

            def about(on: On) -> CatalogObject | None:
                """The object of a need, if it is the system or the object asked about."""
                if on.type is ObjectType.SYSTEM:
                    return snapshot.system
                if asked and on.name == "name" and on.type in (None, asked.type):
                    return asked
                return None

            answers = {}
            for operation, rule in OPERATIONS.items():
                groups = [[(n.action, about(n.on)) for n in group] for group in rule.all_of]
                decidable = [[(a, o) for a, o in group if o is not None] for group in groups]
                if not rule.public and decidable == groups:  # no need on an object not named
                    answers[operation] = all(
                        decide_any(subject, group, snapshot).allowed for group in decidable
                    )
            return answers

        return self.core.decided(answer)

    def audit(self, subject: Subject, **filters) -> list[Entry]:
        """Audit entries, newest first, for administrators (filters: ``audit.query``)."""
        self.core.require_admin(subject, "audit_read")
        with self.core.store.reader() as conn:
            return query(conn, **filters)

    def close(self) -> None:
        self.core.store.close()
