"""Each user's dashboards: named pages of panels, each an output shown as a table, a chart or a map.

A dashboard is a preference of its user, not a security object: no snapshot holds it, nobody
else (an administrator included) reads or changes it, and it goes when its user is deleted.
So every call is about the caller's own dashboards, keyed by its user id (never reused): a
name another user chose is simply not there. Panels only name outputs; whether the user may
subscribe to one is decided when the page subscribes, as for any subscriber, so storing a
name reveals nothing. What a panel holds (its shape) is the API's JSON schema
(``server.http.api.dashboards``); here, how many and how large.

>>> from catalog.bootstrap import add_admin
>>> from catalog.front import Catalog
>>> cat = Catalog.open("sqlite:///:memory:", bcrypt_rounds=4)
>>> add_admin(cat, "joe", "correct horse battery")
True
>>> _, joe = cat.sessions.login("joe", "correct horse battery")
>>> cat.dashboards.put(joe, "main", [{"output": "out1", "view": "table"}]).panels
[{'output': 'out1', 'view': 'table'}]
>>> [d.name for d in cat.dashboards.mine(joe)]
['main']
"""

from __future__ import annotations

import json
from typing import Any

from boxes import codes
from boxes.errors import Conflict, InvalidInput, NotFound
from catalog import repository
from catalog.core import Core
from catalog.model import Subject, check_name
from catalog.repository import DashboardRow

MAX_DASHBOARDS = 20  # per user
MAX_BYTES = 16_384  # one dashboard's panels, as stored (JSON)


class Dashboards:
    def __init__(self, core: Core) -> None:
        self.core = core

    def mine(self, subject: Subject) -> list[DashboardRow]:
        """The caller's dashboards, by name."""
        user = self._user(subject)
        with self.core.store.reader() as conn:
            return repository.dashboards_of(conn, user)

    def get(self, subject: Subject, name: str) -> DashboardRow:
        found = [d for d in self.mine(subject) if d.name == name]
        if not found:
            raise NotFound(what="dashboard", name=str(name)[:64])
        return found[0]

    def put(self, subject: Subject, name: str, panels: list[dict[str, Any]]) -> DashboardRow:
        """Store the caller's dashboard ``name`` (new, or replaced whole)."""
        check_name(name, "dashboard")
        text = json.dumps(panels, separators=(",", ":"))
        size = len(text.encode())
        if size > MAX_BYTES:
            raise InvalidInput(code=codes.DASHBOARD_TOO_LARGE, size=size, limit=MAX_BYTES)
        user, at = self._user(subject), self.core.clock()
        with self.core.store.transaction() as conn:  # the write lock: the count stays true
            count = repository.count_dashboards(conn, user)
            if count >= MAX_DASHBOARDS and not repository.has_dashboard(conn, user, name):
                raise Conflict(code=codes.TOO_MANY_DASHBOARDS, count=count)
            repository.put_dashboard(conn, user, name, text, at)
        return DashboardRow(name, json.loads(text), at)

    def delete(self, subject: Subject, name: str) -> None:
        user = self._user(subject)
        with self.core.store.transaction() as conn:
            if not repository.delete_dashboard(conn, user, name):
                raise NotFound(what="dashboard", name=str(name)[:64])

    def _user(self, subject: Subject) -> int:
        """The id of the caller's user, while its session is valid."""
        return self.core.decided(lambda snapshot: self.core.valid(subject, snapshot)).user_id
