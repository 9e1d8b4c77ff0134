"""Creating, finding and dropping owned objects, and the user abstraction layer (``lookup``).

A new object is owned by the user who created it and by the active role it was created under.
A new diagram is checked recursively, as Borealis does: ADD on the system, then VIEW_OBJECT and
READ_TUPLE on every input stream it reads (and VIEW_OBJECT on their schemas), VIEW_OBJECT and
SUBSCRIBE on every other diagram's output it reads (a derived input), then USE on every
box type it uses and its cost against the session's limits (``catalog.operators``); then the
diagram, its boxes, derived streams and outputs are created in one transaction. A deploy checks
the box types, limits and outputs read again, for the deploying session.

A diagram's ``refs`` are the input streams and the outputs it reads. Reading an output needs no
right on that output's sources: its tuples keep their labels (``boxes/input.py``), so the
SecFilter still asks for them at delivery. A diagram whose outputs others read can be neither
dropped nor replaced (``DERIVED_IN_USE``), so no cycle of diagrams can form, and none is
ever left reading a log that is gone.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from boxes import codes
from boxes.cost import Cost, cost_of
from boxes.document import Plan, validate
from boxes.errors import (
    Conflict,
    Denied,
    DiagramInvalid,
    InvalidInput,
    NotFound,
    Problem,
    SluiceError,
)
from boxes.input import Derived, InputBox
from boxes.output import OutputBox
from boxes.types import parse_schema
from catalog import names as names_
from catalog import policy, repository
from catalog.accounts import role_named
from catalog.authorizer import active_roles, decide
from catalog.core import Core
from catalog.model import Action, CatalogObject, ObjectType, Subject, check_name
from catalog.names import Name
from catalog.operators import Operators
from catalog.snapshot import Snapshot
from catalog.versions import MAX_VERSIONS

QUERY_STATUSES = ("running", "stopped")
T = ObjectType


@dataclass(frozen=True)
class DiagramSpec:
    """The names a diagram brings into the catalog; the compiler has already validated it.

    Boxes and derived streams are stored as ``diagram.box``; outputs keep their own name, since
    subscribers ask for them by name.
    """

    name: str
    inputs: tuple[str, ...]
    boxes: tuple[str, ...]
    outputs: tuple[str, ...]
    streams: tuple[str, ...] = ()
    document: Mapping[str, Any] | None = field(default=None, compare=False)
    derived: tuple[str, ...] = ()  # other diagrams' outputs it reads
    cost: Cost = field(default=Cost(), compare=False)  # ``boxes.cost.cost_of`` its plan


def owner_role(subject: Subject, role: str | None, snapshot: Snapshot) -> str:
    """The role, active in the session now, that will own what the subject creates."""
    active = active_roles(subject, snapshot) or frozenset()
    if role is None:
        if len(active) != 1:
            raise InvalidInput(code=codes.OWNER_ROLE_REQUIRED)
        (role,) = active
    if role not in active:
        raise Denied(code=codes.ROLE_NOT_ACTIVE, role=str(role)[:64])
    return role


@dataclass(frozen=True)
class Resumable:
    """A running diagram, its inputs' schemas, the outputs it reads (``Derived``) and the
    source indexes of every source stream its labels may name (its own inputs' and those of
    the outputs it reads, recursively)."""

    diagram: CatalogObject
    schemas: Mapping[str, dict]
    sources: Mapping[str, int]
    derived: Mapping[str, Derived] = field(default_factory=dict)
    # Why the outputs it reads could not be described (an upstream document no longer
    # valid): raised when it is run, so one such diagram does not stop the others resuming.
    problem: SluiceError | None = None
    # The key of each output it writes or reads whose key is not the name its document gives
    # (one named over an output its creator could not see: ``catalog.names``)
    keys: Mapping[str, str] = field(default_factory=dict)

    def keyed(self, plan: Plan) -> Plan:
        """``plan`` (of this diagram's document) as the runtime knows it: named by the
        diagram's key, its outputs and the outputs it reads by theirs, so its checkpoints,
        result logs and deliveries are its own whatever another's diagram is named."""

        def key(box):
            if isinstance(box, OutputBox):
                return replace(box, name=self.keys.get(box.name, box.name))
            if isinstance(box, InputBox) and box.output is not None:
                return replace(box, output=self.keys.get(box.output, box.output))
            return box

        return replace(
            plan,
            name=self.diagram.name,
            boxes=tuple(key(b) for b in plan.boxes),
            outputs={self.keys.get(o, o): schema for o, schema in plan.outputs.items()},
        )


def _schema_object(stream: CatalogObject, snapshot: Snapshot) -> CatalogObject:
    (schema,) = (snapshot.objects[i] for i in stream.refs)
    return schema


def schema_of(stream: CatalogObject, snapshot: Snapshot) -> dict:
    spec = _schema_object(stream, snapshot).spec
    assert spec is not None, "a schema object keeps its fields"
    return json.loads(spec)


def _source_index(stream: CatalogObject) -> int:
    assert stream.source_index is not None, "every input stream has a source index"
    return stream.source_index


def _cost_of(diagram: CatalogObject, snapshot: Snapshot) -> Cost:
    """The cost of a stored diagram's document, validated against its inputs' schemas now."""
    if diagram.spec is None:
        return Cost()
    return cost_of(_stored_plan(diagram, snapshot))


def _reads(diagram: CatalogObject, snapshot: Snapshot, type_: ObjectType) -> list[CatalogObject]:
    """The input streams (``STREAM``) or other diagrams' outputs (``OUTPUT``) it reads."""
    return [o for i in diagram.refs if (o := snapshot.objects[i]).type is type_]


def _stored_plan(
    diagram: CatalogObject, snapshot: Snapshot, seen: frozenset[int] = frozenset()
) -> Plan:
    """A stored diagram's document validated against the catalog now: its streams' schemas
    and, recursively, the outputs it reads. A cycle (which the catalog's rules prevent) is
    refused rather than followed forever."""
    if diagram.id in seen:
        raise InvalidInput(
            code=codes.DERIVED_CYCLE, diagram=diagram.name, chain="a loop of diagrams"
        )
    assert diagram.spec is not None, "only a diagram with a document is planned"
    streams = {}
    for stream in _reads(diagram, snapshot, T.STREAM):
        schema = parse_schema(schema_of(stream, snapshot), stream.name)[0]
        assert schema is not None, "the catalog stores only valid schemas"
        streams[stream.name] = schema
    outputs = {
        o.public: _derived(o, snapshot, seen | {diagram.id})
        for o in _reads(diagram, snapshot, T.OUTPUT)
    }
    return validate(json.loads(diagram.spec), streams, outputs)


def _derived(output: CatalogObject, snapshot: Snapshot, seen: frozenset[int]) -> Derived:
    """What a diagram reading ``output`` knows of it: its schema, sources and level."""
    assert output.parent_id is not None, "an output belongs to its diagram"
    plan = _stored_plan(snapshot.objects[output.parent_id], snapshot, seen)
    return Derived(plan.outputs[output.public], plan.label_sources, plan.level is not None)


def _source_streams(diagram: CatalogObject, snapshot: Snapshot) -> list[CatalogObject]:
    """Every input stream whose tuples may reach ``diagram``: its own, and recursively those
    of the diagrams whose outputs it reads."""
    found = {s.id: s for s in _reads(diagram, snapshot, T.STREAM)}
    for output in _reads(diagram, snapshot, T.OUTPUT):
        assert output.parent_id is not None, "an output belongs to its diagram"
        upstream = snapshot.objects[output.parent_id]
        found |= {s.id: s for s in _source_streams(upstream, snapshot)}
    return list(found.values())


def _readers(diagram: CatalogObject, snapshot: Snapshot) -> list[str]:
    """The other diagrams that read one of ``diagram``'s outputs."""
    outputs = {o.id for o in snapshot.objects.values() if o.parent_id == diagram.id}
    return sorted(
        o.public
        for o in snapshot.objects.values()
        if o.type is T.DIAGRAM and o.id != diagram.id and outputs.intersection(o.refs)
    )


def _new(core: Core, subject: Subject, role: str, type_: ObjectType, name: Name, **extra):
    return CatalogObject(
        id=0,
        type=type_,
        name=name.key,
        public_name=name.public_name,
        owner_user=subject.user_name,
        owner_role=role,
        created_at=core.clock(),
        **extra,
    )


class Objects:
    def __init__(self, core: Core, operators: Operators) -> None:
        self.core = core
        self.operators = operators

    def lookup(self, subject: Subject) -> list[CatalogObject]:
        """Everything the session may view, and nothing else (the user abstraction layer)."""
        snapshot = self.core.snapshot
        self.core.valid(subject, snapshot)
        seen = [
            o
            for o in snapshot.objects.values()
            if decide(subject, Action.VIEW_OBJECT, o, snapshot).allowed
        ]
        return sorted(seen, key=lambda o: (list(T).index(o.type), o.name))

    def get(self, subject: Subject, type_: ObjectType, name: str) -> CatalogObject:
        return self.core.find(subject, type_, name)

    def require(
        self,
        subject: Subject,
        action: Action,
        type_: ObjectType,
        name: str,
        snapshot: Snapshot | None = None,
    ) -> CatalogObject:
        """The object, if the session may do ``action`` on it (WRITE before an append,
        SUBSCRIBE before a subscription); an unseen object answers like a missing one. Checked
        in ``snapshot`` if given (as is, no second look), else in the current one."""
        obj = self.core.find(subject, type_, name, snapshot)
        self.core.require(subject, action, obj, snapshot)
        return obj

    def require_key(
        self,
        subject: Subject,
        action: Action,
        type_: ObjectType,
        key: str,
        snapshot: Snapshot | None = None,
    ) -> CatalogObject:
        """``require`` for the object whose key is ``key`` (the server's own re-checks, such as
        delivery's at every batch), whatever else the session sees by that name; checked in
        ``snapshot`` if given, as ``require`` does."""
        snapshot = self.core.snapshot if snapshot is None else snapshot
        self.core.valid(subject, snapshot)
        obj = snapshot.find(type_, key)
        if obj is None:
            raise NotFound(what=type_.value, name=names_.public_of(key))
        self.core.require(subject, action, obj, snapshot)
        return obj

    def stream_schemas(self, subject: Subject, names) -> dict[str, dict]:
        """The schemas of those ``names`` that are input streams the session may view.

        Names it may not view are left out, exactly like missing ones, so a diagram that
        reads them fails validation the same way either way.
        """
        snapshot = self.core.snapshot
        self.core.valid(subject, snapshot)
        found = {}
        for name in names:
            stream = snapshot.find(T.STREAM, name) if isinstance(name, str) else None
            if (
                stream is not None
                and stream.kind == "input"
                and decide(subject, Action.VIEW_OBJECT, stream, snapshot).allowed
            ):
                found[name] = schema_of(stream, snapshot)
        return found

    def input_streams(self) -> dict[str, dict]:
        """Every input stream's schema, for the server to open their ingestion logs at start-up.
        No session, like ``resumable``."""
        snapshot = self.core.snapshot
        return {
            o.name: schema_of(o, snapshot)
            for o in snapshot.objects.values()
            if o.type is T.STREAM and o.kind == "input"
        }

    def resumable(self) -> list[Resumable]:
        """Diagrams recorded as running, with what it takes to run them: what a restarted
        server deploys again. No session, like ``bootstrap``: only the server process calls it."""
        snapshot = self.core.snapshot
        return [
            _resumable(obj, snapshot)
            for obj in sorted(snapshot.objects.values(), key=lambda o: o.id)
            if obj.type is T.DIAGRAM and obj.status == "running"
        ]

    def resumable_of(self, diagram: CatalogObject, snapshot: Snapshot | None = None) -> Resumable:
        """``resumable``'s entry for one diagram, running or not (in ``snapshot`` if given)."""
        return _resumable(diagram, self.core.snapshot if snapshot is None else snapshot)

    def derived_outputs(self, subject: Subject, names) -> dict[str, Derived]:
        """What a diagram may know of those ``names`` that are outputs the session may view
        (a derived input reads one); others are left out, exactly like missing ones."""
        snapshot = self.core.snapshot
        self.core.valid(subject, snapshot)
        found = {}
        for name in names:
            output = (
                names_.resolve(subject, T.OUTPUT, name, snapshot) if isinstance(name, str) else None
            )
            if output is not None:
                found[name] = _derived(output, snapshot, frozenset())
        return found

    def _check_new(
        self, snapshot: Snapshot, subject: Subject, type_: ObjectType, name: str
    ) -> Name:
        system = snapshot.system
        if system is None:
            raise NotFound("the catalog has no system object yet; bootstrap an administrator")
        self.core.require(subject, Action.ADD, system, snapshot, event=f"{type_.value}_add")
        return names_.new_name(subject, type_, name, snapshot)

    def add_schema(
        self, subject: Subject, name: str, fields: Mapping[str, Any], role: str | None = None
    ) -> CatalogObject:
        """``fields`` is a schema as documents write it: ``{fields: {...}, event_time: ...}``."""
        core = self.core
        check_name(name, "schema")
        schema, problems = parse_schema(fields, f"schemas.{name}")
        if schema is None:
            raise InvalidInput(
                "; ".join(str(p) for p in problems),
                code=codes.SCHEMA_INVALID,
                details={"problems": [p.to_dict() for p in problems]},
            )
        with core.store.lock:
            snapshot = core.snapshot
            role = owner_role(core.valid(subject, snapshot), role, snapshot)
            named = self._check_new(snapshot, subject, T.SCHEMA, name)
            obj = _new(
                core,
                subject,
                role,
                T.SCHEMA,
                named,
                spec=json.dumps(schema.to_dict(), sort_keys=True),
            )
            with core.change() as conn:
                repository.insert_object(conn, obj)
                core.log(subject, "schema_add", f"schema:{named.key}", True, "ADD on system", conn)
        return core.snapshot.stored(T.SCHEMA, named.key)

    def add_stream(
        self, subject: Subject, name: str, schema: str, role: str | None = None
    ) -> CatalogObject:
        """An input stream, with the next never-reused source index."""
        core = self.core
        check_name(name, "stream")
        with core.store.lock:
            snapshot = core.snapshot
            role = owner_role(core.valid(subject, snapshot), role, snapshot)
            schema_obj = core.find(subject, T.SCHEMA, schema, snapshot)
            named = self._check_new(snapshot, subject, T.STREAM, name)
            with core.change() as conn:
                obj = _new(
                    core,
                    subject,
                    role,
                    T.STREAM,
                    named,
                    kind="input",
                    source_index=repository.next_source_index(conn),
                )
                stream_id = repository.insert_object(conn, obj)
                repository.insert_refs(conn, stream_id, [schema_obj.id])
                core.log(
                    subject,
                    "stream_add",
                    f"stream:{name}",
                    True,
                    "ADD on system",
                    conn,
                    schema=schema,
                    source_index=obj.source_index,
                )
        return core.snapshot.stored(T.STREAM, named.key)

    def add_diagram(
        self, subject: Subject, spec: DiagramSpec, role: str | None = None, running: bool = False
    ) -> list[CatalogObject]:
        """Authorize and create a diagram with everything in it; return the created objects.

        ``running``: recorded to run as well, in the same transaction (one commit, one fsync,
        where a create then a deploy take two), and audited as ``set_query_status`` is. What
        that checks to run, the create has checked already (USE on its box types, the limits,
        VIEW_OBJECT and SUBSCRIBE on the outputs it reads), and SET_QUERY_STATUS on a new
        diagram is held by its owner role, which ``owner_role`` found active: nothing else
        can hold a right on an object before it exists."""
        core = self.core
        news = self._diagram_names(spec)
        with core.store.lock:
            snapshot = core.snapshot
            role = owner_role(core.valid(subject, snapshot), role, snapshot)
            named = self._check_new(snapshot, subject, T.DIAGRAM, spec.name)
            inputs = self._check_inputs(snapshot, subject, spec)
            inputs += self._check_outputs_read(snapshot, subject, spec, "diagram_add")
            self.operators.admit(subject, snapshot, spec.name, spec.cost, "diagram_add")
            keys = _member_names(snapshot, subject, named, news)
            status = "running" if running else "stopped"
            with core.change() as conn:
                self._insert_diagram(conn, subject, role, spec, keys, inputs, status)
                core.log(
                    subject,
                    "diagram_add",
                    f"diagram:{spec.name}",
                    True,
                    "ADD on system; VIEW_OBJECT and READ_TUPLE on every input",
                    conn,
                    inputs=list(spec.inputs),
                    objects=len(news),
                )
                if running:
                    core.log(
                        subject,
                        "query_status",
                        f"diagram:{spec.name}",
                        True,
                        f"SET_QUERY_STATUS: role {role} owns it",
                        conn,
                        status=status,
                    )
        snapshot = core.snapshot
        return [snapshot.stored(t, n.key) for t, n in keys]

    def replace_diagram(self, subject: Subject, spec: DiagramSpec) -> list[CatalogObject]:
        """Replace a diagram by a new version of the same name, in one transaction; a running
        one stays running (its new version is to run in its place, which needs
        SET_QUERY_STATUS: ``server.control.lifecycle.replace`` swaps the queries).

        Its owner role keeps it (the ``diagrams.update`` rule of ``catalog.policy``). The old
        objects go and the new ones come in the same transaction, so a failure leaves the old
        version whole and its name is never free for someone else to take. Grants on the
        diagram and its outputs start afresh: a changed query may expose other data, and its
        owner grants it again deliberately.
        """
        core = self.core
        news = self._diagram_names(spec)
        with core.store.lock:
            core.authorize(
                subject,
                policy.OPERATIONS["diagrams.update"],
                {"name": spec.name},
                "diagram_replace",
            )
            snapshot = core.snapshot
            old = core.find(subject, T.DIAGRAM, spec.name, snapshot)
            if old.status == "running":  # the new version is to run in its place
                core.require(subject, Action.SET_QUERY_STATUS, old, snapshot)
            readers = _readers(old, snapshot)
            if readers:
                raise Conflict(
                    code=codes.DERIVED_IN_USE, diagram=old.public, readers=", ".join(readers)
                )
            inputs = self._check_inputs(snapshot, subject, spec)
            inputs += self._check_outputs_read(snapshot, subject, spec, "diagram_replace", old)
            self.operators.admit(subject, snapshot, spec.name, spec.cost, "diagram_replace")
            named = Name(old.name, old.public_name)
            keys = _member_names(snapshot, subject, named, news, replacing=old)
            with core.change() as conn:
                repository.delete_object(conn, old.id)
                status = old.status or "stopped"
                self._insert_diagram(conn, subject, old.owner_role, spec, keys, inputs, status)
                core.log(
                    subject,
                    "diagram_replace",
                    f"diagram:{spec.name}",
                    True,
                    "owner; VIEW_OBJECT and READ_TUPLE on every input",
                    conn,
                    inputs=list(spec.inputs),
                    objects=len(news),
                )
        snapshot = core.snapshot
        return [snapshot.stored(t, n.key) for t, n in keys]

    def _insert_diagram(
        self,
        conn,
        subject: Subject,
        role: str,
        spec: DiagramSpec,
        keys: list[tuple[ObjectType, Name]],
        inputs: list[CatalogObject],
        status: str = "stopped",
    ) -> None:
        document = json.dumps(spec.document, sort_keys=True) if spec.document else None
        (_, named), members = keys[0], keys[1:]
        diagram = _new(self.core, subject, role, T.DIAGRAM, named, spec=document, status=status)
        diagram = replace(diagram, id=repository.insert_object(conn, diagram))
        repository.insert_diagram_version(conn, diagram, keep=MAX_VERSIONS)
        repository.insert_refs(conn, diagram.id, [obj.id for obj in inputs])
        repository.insert_members(
            conn,
            diagram,
            (
                (type_, n.key, n.public_name, "derived" if type_ is T.STREAM else None)
                for type_, n in members
            ),
        )

    @staticmethod
    def _diagram_names(spec: DiagramSpec) -> list[tuple[ObjectType, str]]:
        check_name(spec.name, "diagram")
        news = [(T.DIAGRAM, spec.name)]
        for type_, what, names in ((T.BOX, "box", spec.boxes), (T.STREAM, "stream", spec.streams)):
            news += [(type_, f"{spec.name}.{check_name(n, what)}") for n in names]
        news += [(T.OUTPUT, check_name(n, "output")) for n in spec.outputs]
        for name in spec.inputs:
            check_name(name, "input")
        repeated = sorted({n for (_, n), count in Counter(news).items() if count > 1})
        if repeated:  # a document's own mistake (400), not a clash with the catalog (409)
            raise DiagramInvalid(
                [
                    Problem(codes.DUPLICATE_NAME, name, f"{name!r} is used twice in the diagram")
                    for name in repeated
                ]
            )
        if not (spec.inputs or spec.derived) or not spec.outputs:
            raise InvalidInput(code=codes.DIAGRAM_INCOMPLETE)
        return news

    def _check_inputs(
        self, snapshot: Snapshot, subject: Subject, spec: DiagramSpec
    ) -> list[CatalogObject]:
        """Every input must be a visible input stream the session may READ_TUPLE."""
        core = self.core
        inputs, missing, refused = [], [], []
        for name in dict.fromkeys(spec.inputs):
            stream = snapshot.find(T.STREAM, name)
            if (
                stream is None
                or stream.kind != "input"
                or not decide(subject, Action.VIEW_OBJECT, stream, snapshot).allowed
            ):
                missing.append(name)
                continue
            schema = _schema_object(stream, snapshot)
            for action, obj in ((Action.READ_TUPLE, stream), (Action.VIEW_OBJECT, schema)):
                decision = decide(subject, action, obj, snapshot)
                if not decision.allowed:
                    refused.append(f"{action.value} on {obj.type.value} {obj.name}")
                    core.log(
                        subject,
                        "diagram_add",
                        f"{obj.type.value}:{obj.name}",
                        False,
                        decision.reason,
                        action=action.value,
                        diagram=spec.name,
                    )
            inputs.append(stream)
        if missing:
            raise NotFound(f"no input stream named {', '.join(map(repr, missing))}")
        if refused:
            raise Denied(
                f"diagram {spec.name!r} needs {'; '.join(refused)}", details={"missing": refused}
            )
        return inputs

    def _check_outputs_read(
        self,
        snapshot: Snapshot,
        subject: Subject,
        spec: DiagramSpec,
        event: str,
        replacing: CatalogObject | None = None,
    ) -> list[CatalogObject]:
        """Every output a derived input reads must be one the session may view and SUBSCRIBE
        to, of another diagram (reading one's own, the one ``replacing``, would be a cycle)."""
        found, missing, refused = [], [], []
        for name in dict.fromkeys(spec.derived):
            output = names_.resolve(subject, T.OUTPUT, name, snapshot)
            if output is None:
                missing.append(name)
                continue
            if replacing is not None and output.parent_id == replacing.id:
                raise InvalidInput(
                    code=codes.DERIVED_CYCLE, diagram=spec.name, chain=f"it reads output {name}"
                )
            decision = decide(subject, Action.SUBSCRIBE, output, snapshot)
            if not decision.allowed:
                refused.append(f"SUBSCRIBE on output {name}")
                self.core.log(
                    subject,
                    event,
                    f"output:{name}",
                    False,
                    decision.reason,
                    action=Action.SUBSCRIBE.value,
                    diagram=spec.name,
                )
            found.append(output)
        if missing:
            raise NotFound(f"no output named {', '.join(map(repr, missing))}")
        if refused:
            raise Denied(
                f"diagram {spec.name!r} needs {'; '.join(refused)}", details={"missing": refused}
            )
        return found

    def drop(self, subject: Subject, type_: ObjectType, name: str) -> CatalogObject:
        """The owner role (or an administrator: ``policy.drop``) drops an object no other
        object uses; the object dropped is returned (its key is what the runtime knew it by).

        Dropping a diagram drops its boxes, derived streams and outputs with it.
        """
        core = self.core
        with core.store.lock:
            snapshot = core.snapshot
            obj = core.find(subject, type_, name, snapshot)
            if obj.type is T.SYSTEM or obj.parent_id is not None:
                raise InvalidInput(
                    code=codes.NOT_DROPPABLE, object=f"{obj.type.value} {obj.public}"
                )
            core.authorize(subject, policy.drop(obj.type), {"name": name}, f"{obj.type.value}_drop")
            readers = _readers(obj, snapshot) if obj.type is T.DIAGRAM else []
            if readers:
                raise Conflict(
                    code=codes.DERIVED_IN_USE, diagram=obj.public, readers=", ".join(readers)
                )
            users = [o for o in snapshot.objects.values() if obj.id in o.refs]
            if users:
                seen = sorted(  # by name only where the caller may see them
                    f"{o.type.value} {o.public}"
                    for o in users
                    if decide(subject, Action.VIEW_OBJECT, o, snapshot).allowed
                )
                hidden = ["objects you may not view"] if len(seen) < len(users) else []
                raise Conflict(
                    code=codes.IN_USE,
                    object=f"{obj.type.value} {obj.public}",
                    users=", ".join(seen + hidden),
                    details={"used_by": seen},
                )
            with core.change() as conn:
                repository.delete_object(conn, obj.id)
                if obj.type is T.DIAGRAM:
                    repository.delete_diagram_versions(conn, obj.name)
                core.log(
                    subject,
                    f"{obj.type.value}_drop",
                    f"{obj.type.value}:{obj.name}",
                    True,
                    "owner or administrator",
                    conn,
                )
        return obj

    def transfer(self, subject: Subject, type_: ObjectType, name: str, role: str) -> CatalogObject:
        """An administrator hands an object (with what it holds) to another role, e.g. before
        that team's old role is deleted. Existing grants stay; the administrator becomes the
        owner user of record."""
        core = self.core
        with core.store.lock:
            snapshot = core.require_admin(subject, "transfer")
            obj = core.find(subject, type_, name, snapshot)
            if obj.type is T.SYSTEM or obj.parent_id is not None:
                raise InvalidInput(
                    code=codes.NOT_TRANSFERABLE, object=f"{obj.type.value} {obj.public}"
                )
            role_named(snapshot, role)
            _check_role_free(snapshot, obj, role)
            with core.change() as conn:
                repository.set_owner(conn, obj.id, subject.user_name, role)
                core.log(
                    subject,
                    "transfer",
                    f"{obj.type.value}:{obj.name}",
                    True,
                    "administrator",
                    conn,
                    old_role=obj.owner_role,
                    role=role,
                )
        return core.snapshot.objects[obj.id]

    def set_query_status(self, subject: Subject, diagram: str, status: str) -> CatalogObject:
        """Record that a diagram should run or stop; the runner acts on it. To run, the
        session must be allowed its box types and be within its limits now."""
        core = self.core
        if status not in QUERY_STATUSES:
            raise InvalidInput(code=codes.INVALID_STATUS, expected=", ".join(QUERY_STATUSES))
        with core.store.lock:
            snapshot = core.snapshot
            obj = core.find(subject, T.DIAGRAM, diagram, snapshot)
            core.require(subject, Action.SET_QUERY_STATUS, obj, snapshot)
            if status == "running":
                cost = _cost_of(obj, snapshot)
                self.operators.admit(subject, snapshot, diagram, cost, "query_status")
                for output in _reads(obj, snapshot, T.OUTPUT):
                    for action in (Action.VIEW_OBJECT, Action.SUBSCRIBE):
                        core.require(subject, action, output, snapshot, event="query_status")
            with core.change() as conn:
                repository.set_status(conn, obj.id, status)
                core.log(
                    subject,
                    "query_status",
                    f"diagram:{diagram}",
                    True,
                    "SET_QUERY_STATUS",
                    conn,
                    status=status,
                )
        return core.snapshot.objects[obj.id]


def _member_names(
    snapshot: Snapshot,
    subject: Subject,
    diagram: Name,
    news: list[tuple[ObjectType, str]],
    replacing: CatalogObject | None = None,
) -> list[tuple[ObjectType, Name]]:
    """The names of a diagram and its members (``news``, as ``_diagram_names`` lists them):
    boxes and derived streams keyed under the diagram's key, outputs named like any new object
    (the replaced diagram's own are free to keep)."""
    freed = set()
    if replacing is not None:
        freed = {replacing.id} | {
            o.id for o in snapshot.objects.values() if o.parent_id == replacing.id
        }
    named = [(T.DIAGRAM, diagram)]
    for type_, name in news[1:]:
        if type_ is T.OUTPUT:
            named.append((type_, names_.new_name(subject, type_, name, snapshot, freed)))
            continue
        key = f"{diagram.key}.{name.split('.', 1)[1]}"
        named.append((type_, Name(key, None if key == name else name)))
    return named


def _check_role_free(snapshot: Snapshot, obj: CatalogObject, role: str) -> None:
    """A role never holds two objects of one type and name, so a transfer that would make it
    is refused (the administrator making it sees every object)."""
    outputs = [o for o in snapshot.objects.values() if o.parent_id == obj.id and o.type is T.OUTPUT]
    for moved in (obj, *outputs):
        if any(
            o.id != moved.id and o.owner_role == role
            for o in snapshot.named(moved.type, moved.public)
        ):
            raise Conflict(code=codes.DUPLICATE_NAME, what=moved.type.value, name=moved.public)


def _resumable(obj: CatalogObject, snapshot: Snapshot) -> Resumable:
    inputs = _reads(obj, snapshot, T.STREAM)
    derived: dict[str, Derived] = {}
    problem = None
    try:
        for output in _reads(obj, snapshot, T.OUTPUT):
            derived[output.public] = _derived(output, snapshot, frozenset({obj.id}))
    except SluiceError as err:
        problem = err
    outputs = [o for o in snapshot.objects.values() if o.parent_id == obj.id]
    return Resumable(
        obj,
        {s.name: schema_of(s, snapshot) for s in inputs},
        {s.name: _source_index(s) for s in _source_streams(obj, snapshot)},
        derived,
        problem,
        {
            o.public: o.name
            for o in (*outputs, *_reads(obj, snapshot, T.OUTPUT))
            if o.type is T.OUTPUT and o.public != o.name
        },
    )
