"""Administering Chinese-Wall levels: conflict-of-interest classes and their companies, the
company of each input stream, each user's organisation and each role's clearance.

Administrators only (CHANGE_SYSTEM), each change one transaction of :meth:`Core.change` (so the
snapshot's :class:`catalog.clearance.LevelPolicy` is swapped in whole) and audited in it with
its old and new value, like grants. The decisions themselves are ``catalog.clearance``'s.

>>> cat.levels.add_class(joe, "banks"); cat.levels.add_company(joe, "banks", "BankA")
>>> cat.levels.set_stream(joe, "in1", "BankA")
{'company': 'BankA'}
>>> cat.levels.set_clearance(joe, "ADMIN", {"banks": "T"})
{'banks': 'T'}
>>> cat.levels.configuration(joe)["classes"]
[{'name': 'banks', 'companies': ['BankA']}]
"""

from __future__ import annotations

from collections.abc import Mapping

from boxes import codes
from boxes.errors import Conflict, InvalidInput, NotFound
from boxes.levels import BOTTOM, MAX_COMPANIES, TOP
from catalog import repository
from catalog.accounts import role_named, user_named
from catalog.clearance import MULTILEVEL, LevelPolicy
from catalog.core import Core
from catalog.model import ObjectType, Subject, check_name
from catalog.snapshot import Snapshot

EVENT = "levels"
Level = Mapping[str, str]


def stream_entry(policy: LevelPolicy, stream_id: int) -> dict:
    """How a stream's tuples get their level: ``{}`` public, ``{"company": c}``, or
    ``{"multilevel": True}`` (the sender's organisation)."""
    if stream_id not in policy.streams:
        return {}
    company = policy.streams[stream_id]
    return {"multilevel": True} if company is MULTILEVEL else {"company": company}


def _unknown(what: str, name: object) -> NotFound:
    return NotFound(code=codes.LEVEL_UNKNOWN, what=what, name=str(name)[:64])


class Levels:
    def __init__(self, core: Core) -> None:
        self.core = core

    def _admin(self, subject: Subject) -> Snapshot:
        return self.core.require_admin(subject, EVENT)

    def _log(self, subject: Subject, obj: str, conn, **details) -> None:
        self.core.log(subject, EVENT, obj, True, "administrator", conn, **details)

    def configuration(self, subject: Subject) -> dict:
        """Everything, by name: classes (in order) with companies, stream companies, user
        organisations and role clearances."""
        snapshot = self._admin(subject)
        with self.core.store.reader() as conn:
            rows = repository.load_levels(conn)
        policy = snapshot.levels
        return {
            "classes": [{"name": n, "companies": [c for c, _ in cs]} for n, cs in rows.classes],
            "streams": {
                snapshot.objects[i].name: stream_entry(policy, i)
                for i in policy.streams
                if i in snapshot.objects
            },
            "organisations": {
                snapshot.users[i].name: c
                for i, c in policy.organisations.items()
                if i in snapshot.users
            },
            "clearances": {role: dict(level) for role, level in policy.clearances.items()},
        }

    def add_class(self, subject: Subject, name: str) -> None:
        check_name(name, "conflict-of-interest class")
        core = self.core
        with core.store.lock:
            self._admin(subject)
            with core.change() as conn:
                if repository.coi_class_exists(conn, name):
                    raise Conflict(code=codes.DUPLICATE_NAME, what="class", name=name)
                repository.insert_coi_class(conn, name, core.clock())
                self._log(subject, f"coi_class:{name}", conn, change="add class")

    def drop_class(self, subject: Subject, name: str) -> None:
        """Drop a class that has no company left."""
        core = self.core
        with core.store.lock:
            self._admin(subject)
            with core.change() as conn:
                companies = repository.companies_in(conn, name)
                if companies:
                    raise Conflict(
                        code=codes.LEVEL_IN_USE,
                        what="class",
                        name=name,
                        uses=f"{companies} companies",
                    )
                if not repository.delete_coi_class(conn, name):
                    raise _unknown("class", name)
                self._log(subject, f"coi_class:{name}", conn, change="drop class")

    def add_company(self, subject: Subject, coi: str, name: str) -> None:
        """A new company of a class, with a label bit never given before."""
        check_name(name, "company")
        if name in (TOP, BOTTOM):
            raise InvalidInput(code=codes.LEVEL_BAD_CLASSES, reason=f"{name!r} is reserved")
        core = self.core
        with core.store.lock:
            self._admin(subject)
            with core.change() as conn:
                if not repository.coi_class_exists(conn, coi):
                    raise _unknown("class", coi)
                if repository.company_exists(conn, name):
                    raise Conflict(code=codes.DUPLICATE_NAME, what="company", name=name)
                bit = repository.next_company_bit(conn)
                if bit >= MAX_COMPANIES:
                    raise InvalidInput(
                        code=codes.LEVEL_BAD_CLASSES,
                        reason=f"all {MAX_COMPANIES} company bits have been given out",
                    )
                repository.insert_company(conn, name, coi, bit, core.clock())
                self._log(subject, f"company:{name}", conn, change="add company", coi=coi, bit=bit)

    def drop_company(self, subject: Subject, name: str) -> None:
        """Drop a company no stream, organisation or clearance names; its bit is not reused."""
        core = self.core
        with core.store.lock:
            self._admin(subject)
            with core.change() as conn:
                uses = repository.company_uses(conn, name)
                if uses:
                    raise Conflict(
                        code=codes.LEVEL_IN_USE,
                        what="company",
                        name=name,
                        uses=f"{uses} streams, organisations or clearances",
                    )
                if not repository.delete_company(conn, name):
                    raise _unknown("company", name)
                self._log(subject, f"company:{name}", conn, change="drop company")

    def _company(self, snapshot: Snapshot, company: object) -> str:
        if not isinstance(company, str) or snapshot.levels.lattice.company_class(company) is None:
            raise _unknown("company", company)
        return company

    def set_stream(
        self, subject: Subject, stream: str, company: str | None, multilevel: bool = False
    ) -> dict:
        """Give an input stream a company, make it multilevel, or public (neither). Tuples
        already in the log keep the level they were admitted with."""
        core = self.core
        with core.store.lock:
            snapshot = self._admin(subject)
            obj = core.find(subject, ObjectType.STREAM, stream, snapshot)
            if obj.kind != "input":
                raise InvalidInput(code=codes.LEVEL_NOT_INPUT, name=stream)
            if company is not None:
                self._company(snapshot, company)
                multilevel = False
            before = stream_entry(snapshot.levels, obj.id)
            with core.change() as conn:
                repository.set_stream_level(conn, obj.id, company, multilevel)
                after = {"multilevel": True} if multilevel else {"company": company}
                after = after if company is not None or multilevel else {}
                self._log(subject, f"stream:{stream}", conn, old=before, new=after)
            return after

    def set_organisation(self, subject: Subject, user: str, company: str | None) -> str | None:
        """The company a user sends for on multilevel streams (None: none)."""
        core = self.core
        with core.store.lock:
            snapshot = self._admin(subject)
            found = user_named(snapshot, user)
            if company is not None:
                self._company(snapshot, company)
            with core.change() as conn:
                repository.set_organisation(conn, found.id, company)
                self._log(
                    subject,
                    f"user:{user}",
                    conn,
                    old=snapshot.levels.organisations.get(found.id),
                    new=company,
                )
            return company

    def set_clearance(self, subject: Subject, role: str, level: Level) -> dict[str, str]:
        """A role's clearance, per class a company or ``T`` (a class left out, or ``⊥``, is ⊥);
        ``{}`` clears it for public data only. Takes effect on the next delivered batch."""
        core = self.core
        with core.store.lock:
            snapshot = self._admin(subject)
            role_named(snapshot, role)
            policy = snapshot.levels
            policy.mask_of(level)  # refuses unknown classes and companies of another class
            stored = {coi: entry for coi, entry in level.items() if entry != BOTTOM}
            with core.change() as conn:
                repository.set_clearance(conn, role, stored, subject.user_name, core.clock())
                self._log(
                    subject,
                    f"role:{role}",
                    conn,
                    old=dict(policy.clearances.get(role, {})),
                    new=stored,
                )
            return stored
