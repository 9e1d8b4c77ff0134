"""Which permissions every operation needs: one table, kept as data (pycasbin's policy-as-data).

An operation is a REST route (its endpoint name: ``diagrams.update``), a socket event
(``socket.subscribe``) or a page (``index``). :data:`OPERATIONS` says, for each, whether it
needs a session and what the session must hold on which object; the objects are named by the
operation's arguments (path parameters, body or event payload). The guard consults this table
before any view or socket handler runs; an operation missing from it is refused (deny by
default), and the server refuses to start with a route that is missing. The decision itself is
:func:`catalog.authorizer.decide_any`, a pure function of the snapshot.

>>> print(OPERATIONS["diagrams.delete"])
OWNER of diagram <name> or CHANGE_SYSTEM on the system
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from catalog.authorizer import OWNER
from catalog.model import Action, CatalogObject, ObjectType

T, A = ObjectType, Action


@dataclass(frozen=True)
class On:
    """The object a need is about: of ``type`` (None: the argument ``type_`` names the type),
    named by the argument ``name`` (None for the one system object)."""

    type: ObjectType | None
    name: str | None = "name"

    def __str__(self) -> str:
        if self.type is T.SYSTEM:
            return "the system"
        return f"{self.type.value if self.type else '<type_>'} <{self.name}>"


@dataclass(frozen=True)
class Need:
    """Hold ``action`` on the object (``OWNER``: own it, through an active role)."""

    action: Action | str
    on: On

    def __str__(self) -> str:
        return self._phrase(str(self.on))

    def about(self, obj: CatalogObject) -> str:
        """This need as it applies to ``obj`` (``CHANGE_PERM on stream in5``), for a message
        the caller reads: the rule's own text names the arguments (``<type_> <name>``)."""
        return self._phrase(
            "the system" if obj.type is T.SYSTEM else f"{obj.type.value} {obj.name}"
        )

    def _phrase(self, where: str) -> str:
        action = self.action.value if isinstance(self.action, Action) else self.action
        return f"{action} {'of' if self.action == OWNER else 'on'} {where}"


@dataclass(frozen=True)
class Rule:
    """``public``: no session needed. Otherwise an open session and, for every group of
    ``all_of``, any one of its needs."""

    public: bool = False
    all_of: tuple[tuple[Need, ...], ...] = ()

    def __str__(self) -> str:
        if self.public:
            return "public"
        if not self.all_of:
            return "a session"
        return "; ".join(" or ".join(map(str, group)) for group in self.all_of)


def needs(*groups: Need | tuple[Need, ...]) -> Rule:
    """A rule from needs, each of them required; a tuple of needs is alternatives."""
    return Rule(all_of=tuple(g if isinstance(g, tuple) else (g,) for g in groups))


PUBLIC = Rule(public=True)
SESSION = Rule()  # any open session; what it then sees is filtered by VIEW_OBJECT
SYSTEM = On(T.SYSTEM, None)
ADMIN = Need(A.CHANGE_SYSTEM, SYSTEM)
ANY = On(None)  # the object named by the arguments ``type_`` and ``name``


def drop(type_: ObjectType) -> Rule:
    """Dropping an object: its owner role, or an administrator (to stop a leak)."""
    return needs((Need(OWNER, On(type_)), ADMIN))


SCHEMA, STREAM, DIAGRAM, OUTPUT = On(T.SCHEMA), On(T.STREAM), On(T.DIAGRAM), On(T.OUTPUT)

OPERATIONS: Mapping[str, Rule] = {
    # pages, the API's description, logging in and out
    "index": PUBLIC,
    "static": PUBLIC,
    "openapi_json": PUBLIC,
    "auth.login": PUBLIC,
    "auth.logout": SESSION,
    "auth.whoami": SESSION,
    "auth.capabilities": SESSION,  # answers only about the caller, and audits nothing
    "auth.capabilities_of": SESSION,  # likewise; an object it may not view is NOT_FOUND
    "auth.change_password": SESSION,  # the old password is the proof
    "box_types.index": SESSION,
    # lookup: lists show only what the session may view
    "catalog.lookup": SESSION,
    "catalog.describe": needs(Need(A.VIEW_OBJECT, ANY)),
    "schemas.index": SESSION,
    "schemas.create": needs(Need(A.ADD, SYSTEM)),
    "schemas.describe": needs(Need(A.VIEW_OBJECT, SCHEMA)),
    "schemas.delete": drop(T.SCHEMA),
    "streams.index": SESSION,
    "streams.create": needs(Need(A.VIEW_OBJECT, On(T.SCHEMA, "schema")), Need(A.ADD, SYSTEM)),
    "streams.describe": needs(Need(A.VIEW_OBJECT, STREAM)),
    "streams.delete": drop(T.STREAM),
    "streams.append": needs(Need(A.WRITE, STREAM)),
    "streams.punctuations": needs(Need(A.VIEW_OBJECT, STREAM)),
    "streams.set_punctuations": needs((Need(OWNER, STREAM), ADMIN)),
    "streams.server_policy": needs(ADMIN),
    "streams.set_server_policy": needs(ADMIN),
    # diagrams: the catalog also checks READ_TUPLE on every input the document reads
    "diagrams.index": SESSION,
    # with "deploy": true also SET_QUERY_STATUS on the new diagram, which no rule can name
    # before it exists: the catalog decides it (its owner role's) in the create's transaction
    "diagrams.create": needs(Need(A.ADD, SYSTEM)),
    "diagrams.check": SESSION,  # validates against the streams it may view
    "diagrams.cql": SESSION,  # likewise, then prints the document as CQL
    "diagrams.describe": needs(Need(A.VIEW_OBJECT, DIAGRAM)),
    "diagrams.update": needs(Need(OWNER, DIAGRAM), Need(A.ADD, SYSTEM)),
    "diagrams.delete": drop(T.DIAGRAM),
    "diagrams.deploy": needs(Need(A.SET_QUERY_STATUS, DIAGRAM)),
    "diagrams.stop": needs(Need(A.SET_QUERY_STATUS, DIAGRAM)),
    "diagrams.status": needs(Need(A.VIEW_OBJECT, DIAGRAM)),
    "diagrams.preview": needs(Need(A.VIEW_OBJECT, DIAGRAM)),
    "diagrams.versions": needs(Need(A.VIEW_OBJECT, DIAGRAM)),
    "diagrams.version": needs(Need(A.VIEW_OBJECT, DIAGRAM)),
    "diagrams.compare": needs(Need(A.VIEW_OBJECT, DIAGRAM)),
    "diagrams.restore": needs(Need(OWNER, DIAGRAM), Need(A.ADD, SYSTEM)),
    "outputs.index": SESSION,
    "outputs.describe": needs(Need(A.VIEW_OBJECT, OUTPUT)),
    "outputs.recent": needs(Need(A.SUBSCRIBE, OUTPUT)),
    "outputs.results": needs(Need(A.SUBSCRIBE, OUTPUT)),
    "outputs.variant": needs(Need(A.SUBSCRIBE, OUTPUT)),
    # a session's own dashboards: the catalog looks a name up among its user's only
    "dashboards.index": SESSION,
    "dashboards.describe": SESSION,
    "dashboards.put": SESSION,
    "dashboards.delete": SESSION,
    # permissions: the catalog also checks that a granter holds what it grants
    "permissions.table": needs(ADMIN),
    "permissions.of": needs((Need(A.CHANGE_PERM, ANY), ADMIN)),
    "permissions.grant": needs(Need(A.CHANGE_PERM, ANY)),
    "permissions.revoke": needs((Need(A.CHANGE_PERM, ANY), ADMIN)),
    # administration
    "users.index": needs(ADMIN),
    "users.create": needs(ADMIN),
    "users.change": needs(ADMIN),
    "users.delete": needs(ADMIN),
    "users.assign": needs(ADMIN),
    "users.unassign": needs(ADMIN),
    "roles.index": needs(ADMIN),
    "roles.create": needs(ADMIN),
    "roles.delete": needs(ADMIN),
    "roles.limits": needs(ADMIN),
    "roles.set_limits": needs(ADMIN),
    "levels.show": needs(ADMIN),
    "levels.add_class": needs(ADMIN),
    "levels.drop_class": needs(ADMIN),
    "levels.add_company": needs(ADMIN),
    "levels.drop_company": needs(ADMIN),
    "levels.set_stream": needs(ADMIN),
    "levels.set_clearance": needs(ADMIN),
    "levels.set_organisation": needs(ADMIN),
    "policies.index": needs(ADMIN),
    "policies.create": needs(ADMIN),
    "policies.replace": needs(ADMIN),
    "policies.delete": needs(ADMIN),
    "policies.attributes": needs(ADMIN),
    "policies.set_attributes": needs(ADMIN),
    "audit.index": needs(ADMIN),
    "system.status": needs(ADMIN),
    "system.show": needs(ADMIN),
    "system.change": needs(ADMIN),
    # socket events
    "socket.subscribe": needs(Need(A.SUBSCRIBE, On(T.OUTPUT, "output"))),
    "socket.unsubscribe": SESSION,
    "socket.ingest": needs(Need(A.WRITE, On(T.STREAM, "stream"))),
}
