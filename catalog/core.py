"""The shared heart of the catalog: the store, the current snapshot, and the one way to change both.

Every change to what the snapshot holds (accounts, roles, objects, grants, sessions) runs
through :meth:`Core.change`: one transaction, the new snapshot built from the same transaction
and checked (there must stay an administrator), then swapped in whole. The audit trail
(:meth:`Core.log`) and the system settings (``system.py``), which no snapshot holds, are
written in plain transactions of their own. Reads
take the current snapshot without waiting for a writer; a commit by another process (``sluice
user disable`` while the server runs, another server on PostgreSQL) is noticed through the
store's ``data_version`` (SQLite's, or PostgreSQL's notices) and reloaded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy.exc import IntegrityError

from boxes import codes
from boxes.errors import Conflict, Denied, InvalidInput, NotFound, Unauthenticated
from catalog import audit, changelog, repository
from catalog.authorizer import Decision, decide, decide_any
from catalog.model import Action, CatalogObject, ObjectType, Subject, parse_type
from catalog.names import resolve
from catalog.snapshot import (
    Snapshot,
    build,
    with_access,
    with_levels,
    with_objects,
    with_punctuations,
    with_subjects,
)
from catalog.store import Store

INVALID_SESSION = "no valid session; log in again"
INVALID_CREDENTIALS = "invalid credentials"
CHANGED_MEANWHILE = "another process changed the catalog meanwhile; try again"

T = TypeVar("T")
# What a change did: the events its audit entries name (``login``, ``revoke``...); None for
# another process's change, reloaded whole, whose kind is unknown.
Kinds = frozenset[str] | None


class Refused(Exception):
    """A decision that refused, carried out of :meth:`Core.decided` to be audited once."""

    def __init__(self, snapshot: Snapshot, decision: Decision, group: Any = None) -> None:
        super().__init__(decision.reason)
        self.snapshot, self.decision, self.group = snapshot, decision, group


@dataclass(frozen=True)
class Settings:
    """Checked when the catalog opens, not at the first login."""

    bcrypt_rounds: int = 12
    session_ttl: float = 8 * 3600.0

    def __post_init__(self) -> None:
        if not (isinstance(self.bcrypt_rounds, int) and 4 <= self.bcrypt_rounds <= 31):
            raise InvalidInput(
                "bcrypt_rounds must be a whole number from 4 to 31", code=codes.INVALID_SETTING
            )
        if not self.session_ttl > 0:
            raise InvalidInput(
                "session_ttl must be a positive number of seconds", code=codes.INVALID_SETTING
            )


def load(conn) -> Snapshot:
    """A snapshot of every row; what the change log noted so far is in it, so forget it."""
    changelog.take(conn)
    return build(
        repository.load_subjects(conn),
        repository.load_objects(conn),
        repository.load_levels(conn),
        repository.load_policies(conn),
        repository.load_punctuations(conn),
    )


def advance(previous: Snapshot, conn) -> Snapshot:
    """``previous`` with what this connection changed since it was made (see ``changelog``)."""
    touched = changelog.take(conn)
    snapshot = previous
    if touched.subjects:
        snapshot = with_subjects(snapshot, repository.load_subjects(conn))
    if touched.objects:
        snapshot = with_objects(
            snapshot, touched.objects, repository.load_objects(conn, touched.objects)
        )
    if touched.levels:
        snapshot = with_levels(snapshot, repository.load_levels(conn))
    if touched.policies:
        snapshot = with_access(snapshot, repository.load_policies(conn))
    if touched.punctuations:
        snapshot = with_punctuations(snapshot, repository.load_punctuations(conn))
    return snapshot


class Core:
    def __init__(self, store: Store, settings: Settings, clock: Callable[[], float]) -> None:
        self.store = store
        self.settings = settings
        self.clock = clock
        self._seen_data = store.data_version()
        changelog.install(store)
        with store.transaction() as conn:
            self._snapshot, self._version = load(conn), repository.catalog_version(conn)
        self._listeners: list[Callable[[Kinds], None]] = []
        self._logged: tuple[Any, list[str]] | None = None  # the changing conn, its events
        store.on_notice(self._noticed)

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` after every new snapshot, ours or another process's.

        The server uses it to end the sockets of a logged-out session or a disabled user at
        once. Listeners run in the changing thread (or the one that noticed another process's
        change), so they should only signal, not work.
        """
        self.on_change_of(lambda kinds: listener())

    def on_change_of(self, listener: Callable[[Kinds], None]) -> None:
        """``on_change``, telling ``listener`` what changed (``Kinds``), so one that cares
        only for some changes can skip the rest."""
        self._listeners.append(listener)

    def _changed(self, kinds: Kinds) -> None:
        for listener in list(self._listeners):
            listener(kinds)

    @property
    def snapshot(self) -> Snapshot:
        """The current snapshot, reloaded first if another process changed the catalog."""
        data = self.store.data_version()
        if data != self._seen_data:
            # Marked seen only once read: a thread arriving meanwhile checks too (and waits for
            # the reload), rather than taking the snapshot from before the change.
            self.catch_up()
            self._seen_data = data
        return self._snapshot

    def catch_up(self) -> Snapshot:
        """The snapshot, reloaded first if the catalog's version moved, whether or not its
        notice has arrived: one look at the database."""
        with self.store.reader() as conn:
            stale = repository.catalog_version(conn) != self._version
        reloaded = False
        if stale:
            with self.store.transaction() as conn:
                version = repository.catalog_version(conn)
                if version != self._version:
                    self._snapshot, self._version = load(conn), version
                    reloaded = True
        if reloaded:
            self._changed(None)
        return self._snapshot

    def current(self) -> Snapshot:
        """The snapshot with every change committed before this call in it, wherever it was
        made: which rows a subscriber gets must not wait for another server's notice, or rows
        would pass here under a right already revoked there. On SQLite the snapshot (its
        ``data_version`` is exact); where notices may lag (PostgreSQL), one look at the
        database."""
        return self.snapshot if self.store.exact else self.catch_up()

    def settle(self) -> Snapshot:
        """Once the notice of every change committed so far has arrived, the snapshot with
        them in it (and no reload of theirs still running); at once on SQLite."""
        self.store.settle()
        return self.catch_up()

    def _noticed(self) -> None:
        """The store heard of a commit (PostgreSQL's notices): reload now, not at the next
        access, so listeners (the sockets of a user disabled elsewhere) learn of it at once."""
        self.snapshot  # noqa: B018 (the property reloads)

    @contextmanager
    def change(self) -> Iterator:
        """A transaction whose commit also replaces the snapshot, or which leaves no trace.

        The new snapshot is the current one with the rows the transaction touched read again,
        unless another process committed in between: then every row is. The caller checked the
        change against the snapshot; if another process changed the catalog meanwhile and the
        database refuses a row (a name taken, an object gone), that is a CONFLICT to retry.
        """
        with self.store.lock:
            with self.store.transaction() as conn:
                version = repository.bump_catalog_version(conn)  # undone with the change
                current = version - 1 == self._version
                events: list[str] = []
                self._logged = (conn, events)
                try:
                    yield conn
                except Exception as err:
                    if current or not isinstance(err, IntegrityError):
                        raise
                    raise Conflict(code=codes.CONFLICT, reason=CHANGED_MEANWHILE) from err
                finally:
                    self._logged = None
                snapshot = advance(self._snapshot, conn) if current else load(conn)
                if snapshot.system is not None and not snapshot.administrators():
                    raise Conflict(code=codes.LAST_ADMINISTRATOR)
                self.store.announce(conn, version)
            self._snapshot, self._version = snapshot, version
        self._changed(frozenset(events))

    def log(
        self,
        subject: Subject | None,
        event: str,
        obj: str | None,
        allowed: bool,
        reason: str,
        conn=None,
        **details,
    ) -> None:
        """Append an audit entry, in ``conn``'s transaction if given, else in its own."""
        entry: dict[str, Any] = dict(
            at=self.clock(),
            user=subject.user_name if subject else None,
            roles=subject.roles if subject else (),
            event=event,
            object=obj,
            allowed=allowed,
            reason=reason,
            details=details,
        )
        if conn is not None:
            audit.record(conn, **entry)
            if self._logged is not None and self._logged[0] is conn:
                self._logged[1].append(event)
            return
        with self.store.transaction() as own:
            audit.record(own, **entry)

    def valid(self, subject: Subject | None, snapshot: Snapshot) -> Subject:
        """The subject if its session is open, unexpired and its user enabled."""
        session = snapshot.sessions.get(subject.session_id) if subject else None
        user = snapshot.users.get(subject.user_id) if subject else None
        if (
            subject is None
            or session is None
            or user is None
            or not user.enabled
            or session.expires_at <= self.clock()
        ):
            raise Unauthenticated(INVALID_SESSION)
        return subject

    def decided(self, check: Callable[[Snapshot], T], given: Snapshot | None = None) -> T:
        """``check(snapshot)``, which raises to refuse; on a refusal against the current
        snapshot (not one the caller ``given``), once more after one look at the database.

        Another server's change whose notice is still on its way (a login there, a schema just
        added there, a grant) then counts at once, so a client may turn to any server right
        after another answered it. A request has looked once already, when its session was
        resolved (``Sessions.resolve``); this look covers what was committed since, and checks
        made outside a request.
        """
        if given is not None:
            return check(given)
        snapshot = self.snapshot
        try:
            return check(snapshot)
        except (Unauthenticated, NotFound, Denied, Refused):
            fresh = self.catch_up()
            if fresh is snapshot:
                raise
        return check(fresh)

    def find(
        self, subject: Subject | None, type_: object, name: object, snapshot: Snapshot | None = None
    ) -> CatalogObject:
        """The object if the subject may view it; otherwise exactly what a missing one gives
        (a request's type and name are checked here, so they may be anything)."""
        type_ = parse_type(type_)

        def found(snapshot: Snapshot) -> CatalogObject:
            self.valid(subject, snapshot)
            obj = resolve(subject, type_, name, snapshot) if isinstance(name, str) else None
            if obj is None:
                raise NotFound(what=type_.value, name=str(name)[:64])
            return obj

        return self.decided(found, snapshot)

    def require(
        self,
        subject: Subject | None,
        action: Action,
        obj: CatalogObject | None,
        snapshot: Snapshot | None = None,
        event: str | None = None,
    ) -> Decision:
        """Allow, or audit the denial and raise: NOT_FOUND if unseen, PERMISSION_DENIED if seen."""

        def allowed(snapshot: Snapshot) -> Decision:
            self.valid(subject, snapshot)
            decision = decide(subject, action, obj, snapshot)
            if not decision.allowed:
                raise Refused(snapshot, decision)
            return decision

        try:
            return self.decided(allowed, snapshot)
        except Refused as refused:
            snapshot, decision = refused.snapshot, refused.decision
        where = f"{obj.type.value}:{obj.name}" if obj is not None else None
        self.log(
            subject,
            event or action.value,
            where,
            False,
            decision.reason,
            action=action.value,
            rule=decision.rule,
        )
        if decision.rule == "no_session":
            raise Unauthenticated(INVALID_SESSION)
        if obj is None:
            raise NotFound("no such object")
        if (
            obj.type is not ObjectType.SYSTEM
            and not decide(subject, Action.VIEW_OBJECT, obj, snapshot).allowed
        ):
            raise NotFound(what=obj.type.value, name=obj.public)
        raise Denied(
            details={"action": action.value},
            action=action.value,
            object=f"{obj.type.value} {obj.public!r}",
            reason=decision.reason,
        )

    def authorize(self, subject: Subject | None, rule, args: Mapping[str, Any], event: str) -> None:
        """Allow an operation by its ``catalog.policy.Rule``, or audit the denial and raise.

        Every object the rule names is found first, so one the session may not view answers
        NOT_FOUND (exactly like a missing one) before any PERMISSION_DENIED.
        """
        if rule.public:
            return

        def allowed(snapshot: Snapshot) -> None:
            self.valid(subject, snapshot)
            groups = [
                [(need, self._named(subject, need.on, args, snapshot)) for need in group]
                for group in rule.all_of
            ]
            for group in groups:
                actions = [(need.action, obj) for need, obj in group]
                decision = decide_any(subject, actions, snapshot)
                if not decision.allowed:
                    raise Refused(snapshot, decision, group)

        try:
            return self.decided(allowed)
        except Refused as refused:
            decision, group = refused.decision, refused.group
        obj = group[0][1]
        needs = [need.about(named) for need, named in group]
        self.log(
            subject,
            event,
            f"{obj.type.value}:{obj.name}",
            False,
            decision.reason,
            rule=decision.rule,
            needs=needs,
        )
        if decision.rule == "no_session":
            raise Unauthenticated(INVALID_SESSION)
        raise Denied(
            f"{event} needs {' or '.join(needs)}: {decision.reason}", details={"needs": needs}
        )

    def _named(
        self, subject: Subject | None, on, args: Mapping[str, Any], snapshot: Snapshot
    ) -> CatalogObject:
        """The object a need is about, if the session may view it (see ``policy.On``)."""
        if on.type is ObjectType.SYSTEM:
            if snapshot.system is None:
                raise NotFound("the catalog has no system object yet; bootstrap an administrator")
            return snapshot.system
        return self.find(subject, on.type or args.get("type_"), args.get(on.name), snapshot)

    def require_admin(self, subject: Subject | None, event: str) -> Snapshot:
        """CHANGE_SYSTEM on the system object: what user, role and audit administration need."""

        def bootstrapped(snapshot: Snapshot) -> CatalogObject:
            self.valid(subject, snapshot)
            if snapshot.system is None:
                raise NotFound("the catalog has no system object yet; bootstrap an administrator")
            return snapshot.system

        self.require(subject, Action.CHANGE_SYSTEM, self.decided(bootstrapped), event=event)
        return self.snapshot
