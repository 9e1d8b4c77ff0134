"""A diagram's history: every document it was created or replaced with, newest first.

Versions are written by ``catalog.objects`` in the transaction that stores the diagram, so a
refused or failed replacement leaves no version behind. Reading them needs what reading the
diagram's current document needs (VIEW_OBJECT on it): an old version shows nothing the current
one would not, names and expressions only. Dropping the diagram drops its history.

>>> from catalog.bootstrap import add_admin
>>> from catalog.front import Catalog
>>> cat = Catalog.open("sqlite:///:memory:", bcrypt_rounds=4)
>>> add_admin(cat, "joe", "correct horse battery")
True
>>> _, joe = cat.sessions.login("joe", "correct horse battery")
>>> cat.versions.list(joe, "q1")
Traceback (most recent call last):
...
boxes.errors.NotFound: [NOT_FOUND] no diagram named 'q1'
"""

from __future__ import annotations

from boxes.errors import NotFound
from catalog import repository
from catalog.core import Core
from catalog.model import Action, ObjectType, Subject
from catalog.repository import DiagramVersion

MAX_VERSIONS = 100  # per diagram; the oldest go first


class Versions:
    def __init__(self, core: Core) -> None:
        self.core = core

    def list(self, subject: Subject, diagram: str) -> list[DiagramVersion]:
        """The diagram's versions, newest first (the first is the one stored now)."""
        name = self._viewable(subject, diagram)
        with self.core.store.reader() as conn:
            return repository.diagram_versions(conn, name)

    def get(self, subject: Subject, diagram: str, version: int) -> DiagramVersion:
        name = self._viewable(subject, diagram)
        with self.core.store.reader() as conn:
            found = repository.diagram_version(conn, name, version)
        if found is None:
            raise NotFound(what=f"version of diagram {diagram}", name=str(version)[:20])
        return found

    def _viewable(self, subject: Subject, diagram: str) -> str:
        obj = self.core.find(subject, ObjectType.DIAGRAM, diagram)
        self.core.require(subject, Action.VIEW_OBJECT, obj, event="diagram_versions")
        return obj.name
