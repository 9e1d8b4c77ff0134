"""The policy model of ASSIST (seed 002, section 4 and Table 2), and its YAML form.

A policy grants one role a privilege on a protection object: streams (one; two for a join),
the attributes of each stream it covers (``*``: all), and a predicate in Sluice's expression
language that may read the subject's attributes as ``self.NAME`` and, in a join policy, a
stream's field as ``STREAM.FIELD``. A time constraint bounds the tuples' event time; a
window gives the smallest window size and step an aggregate (or a join's bound) may use.
It is a whitelist: what no policy grants is denied.

>>> [p] = load_policies('''
... policies:
...   - name: company-ships
...     role: ship company
...     streams: {AIS: "*"}
...     where: "SID in (self.ships)"
...     privilege: read
... ''')
>>> p.privilege, p.stream_names, p.uncovered("AIS", {"SID", "Long"})
('read', ('AIS',), [])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from boxes import codes
from boxes.document import load_document
from boxes.durations import parse_duration
from boxes.errors import DiagramInvalid, InvalidInput
from boxes.expressions import check_predicate
from boxes.rewrite.predicates import Unbound, bind, check_policy_predicate
from boxes.types import FIELD_NAME, Field, Schema

READ, JOIN, AGGREGATE = "read", "join", "aggregate"
FUNCTIONS = ("count", "sum", "avg", "min", "max")
ALL = "*"
MAX_POLICIES = 10_000
_KEYS = ("name", "role", "streams", "where", "privilege", "during", "window")


@dataclass(frozen=True)
class Window:
    """The smallest window size and step (seconds) a policy lets a query use; 0: no bound."""

    size: float = 0.0
    step: float = 0.0


@dataclass(frozen=True)
class TimeConstraint:
    """Tuples are covered only while their event time lies in [start, end]: two expressions
    (a ``TIMESTAMP '...'`` literal or a subject attribute such as ``self.emergency_start``)."""

    start: str
    end: str


@dataclass(frozen=True)
class Policy:
    name: str
    role: str
    # Per stream, the attributes covered; None for all of them (``*``).
    streams: tuple[tuple[str, frozenset[str] | None], ...]
    privilege: str  # read, join or aggregate
    where: str | None = None
    functions: frozenset[str] = field(default_factory=frozenset)  # an aggregate's functions
    during: TimeConstraint | None = None
    window: Window = Window()

    @property
    def stream_names(self) -> tuple[str, ...]:
        return tuple(s for s, _ in self.streams)

    def uncovered(self, stream: str, attributes: set[str] | frozenset[str]) -> list[str]:
        """The attributes of ``stream`` among these that the policy does not cover, sorted."""
        granted = dict(self.streams).get(stream, frozenset())
        return [] if granted is None else sorted(set(attributes) - granted)

    def condition(self, event_time: Callable[[str], str | None]) -> str:
        """The predicate a tuple must meet: ``where`` and the time constraint over each
        stream's event time (``event_time(stream)``), unbound (``self.NAME``, ``STREAM.F``).
        Unbound if the time constraint meets a stream without an event time."""
        parts = [self.where] if self.where else []
        if self.during:
            for stream in self.stream_names:
                time = event_time(stream)
                if time is None:
                    raise Unbound(f"{stream!r} has no event time for the policy's time constraint")
                parts.append(
                    f"{stream}.{time} BETWEEN ({self.during.start}) AND ({self.during.end})"
                )
        return parts[0] if len(parts) == 1 else " AND ".join(f"({t})" for t in parts) or "TRUE"


@dataclass(frozen=True)
class Subject:
    """Who deploys: the roles active in the session and the user's attributes (``self``)."""

    roles: frozenset[str]
    attributes: Mapping[str, Any] = field(default_factory=dict)


def load_policies(text: str) -> list[Policy]:
    """Policies from YAML (or JSON) text ``{policies: [...]}``; POLICY_INVALID otherwise."""
    return policies_from(policy_items(text))


def policy_items(text: str) -> list[Any]:
    """The unchecked items of YAML (or JSON) text ``{policies: [...]}``."""
    try:
        doc = load_document(text)
    except DiagramInvalid as err:
        raise invalid("document", "; ".join(p.message for p in err.problems)) from None
    if set(doc) != {"policies"} or not isinstance(doc["policies"], list):
        raise invalid("document", "expected a mapping with one key, 'policies', holding a list")
    return doc["policies"]


def policies_from(items: list[Any]) -> list[Policy]:
    """Policies from loaded YAML items; names must be unique."""
    if len(items) > MAX_POLICIES:
        raise invalid("document", f"{len(items)} policies; at most {MAX_POLICIES}")
    policies = [policy_from(item, i) for i, item in enumerate(items)]
    names = [p.name for p in policies]
    for name in names:
        if names.count(name) > 1:
            raise invalid(name, "two policies have this name")
    return policies


def policy_from(item: Any, index: int) -> Policy:
    """One policy from its mapping, every field checked; ``index`` names it in errors."""
    if not isinstance(item, Mapping):
        raise invalid(f"#{index}", "a policy is a mapping")
    name = item.get("name", f"#{index}")
    if not isinstance(name, str) or not name.strip():
        raise invalid(f"#{index}", "'name' must be non-empty text")
    unknown = sorted(str(k) for k in item if k not in _KEYS)
    if unknown:
        raise invalid(name, f"unknown key(s) {unknown}; expected {list(_KEYS)}")
    role = item.get("role")
    if not isinstance(role, str) or not role.strip():
        raise invalid(name, "'role' must name a role")
    streams = _streams(name, item.get("streams"))
    privilege, functions = _privilege(name, item.get("privilege"))
    wanted = 2 if privilege == JOIN else 1
    if len(streams) != wanted:
        raise invalid(name, f"a {privilege} policy names {wanted} stream(s); got {len(streams)}")
    where = item.get("where")
    if where is not None:
        if not isinstance(where, str):
            raise invalid(name, "'where' must be an expression (text)")
        reason = check_policy_predicate(where, [s for s, _ in streams])
        if reason:
            raise invalid(name, reason)
    during = _during(name, item.get("during"), [s for s, _ in streams])
    window = _window(name, item.get("window"), privilege)
    return Policy(name, role, streams, privilege, where, functions, during, window)


def _streams(name: str, raw: Any) -> tuple[tuple[str, frozenset[str] | None], ...]:
    if not isinstance(raw, Mapping) or not raw:
        raise invalid(name, "'streams' maps each stream to its attributes ('*' or a list)")
    out: list[tuple[str, frozenset[str] | None]] = []
    for stream, attrs in raw.items():
        if not isinstance(stream, str) or not FIELD_NAME.match(stream):
            raise invalid(name, f"{stream!r} is not a stream name")
        if attrs == ALL:
            out.append((stream, None))
        elif (
            isinstance(attrs, list)
            and attrs
            and all(isinstance(a, str) and FIELD_NAME.match(a) for a in attrs)
        ):
            out.append((stream, frozenset(attrs)))
        else:
            raise invalid(name, f"the attributes of {stream!r} are '*' or a list of field names")
    return tuple(out)


def _privilege(name: str, raw: Any) -> tuple[str, frozenset[str]]:
    """read, join, one aggregate function, a list of them, or ``aggregate`` (all five: the
    paper's aggregate privilege "grants Count, Avg, Sum, Max and Min")."""
    if raw in (READ, JOIN):
        return raw, frozenset()
    if raw == AGGREGATE:
        return AGGREGATE, frozenset(FUNCTIONS)
    listed = [raw] if isinstance(raw, str) else raw
    if isinstance(listed, list) and listed and all(f in FUNCTIONS for f in listed):
        return AGGREGATE, frozenset(listed)
    raise invalid(name, f"'privilege' is read, join, aggregate, or some of {', '.join(FUNCTIONS)}")


def _during(name: str, raw: Any, streams: list[str]) -> TimeConstraint | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping) or set(raw) != {"start", "end"}:
        raise invalid(name, "'during' has a 'start' and an 'end' expression")
    for key in ("start", "end"):
        text = raw[key]
        reason = (
            check_policy_predicate(text, streams)
            if isinstance(text, str)
            else "must be an expression (text)"
        )
        if reason:
            raise invalid(name, f"during.{key}: {reason}")
    return TimeConstraint(raw["start"], raw["end"])


def _window(name: str, raw: Any, privilege: str) -> Window:
    if raw is None:
        return Window()
    if privilege == READ:
        raise invalid(name, "a read policy has no window; windows bound aggregates and joins")
    if not isinstance(raw, Mapping) or not set(raw) <= {"size", "step"}:
        raise invalid(name, "'window' has a 'size' and a 'step' (durations such as 10m)")
    size, step = (parse_duration(raw.get(k, "0s")) for k in ("size", "step"))
    if size is None or step is None:
        raise invalid(name, "window size and step are durations such as 10m")
    if privilege == JOIN and step:
        raise invalid(
            name, "a join is bounded by 'within', not stepped: a join policy takes a size only"
        )
    return Window(size, step)


def check_on(p: Policy, schemas: Mapping[str, Schema]) -> None:
    """Refuse (POLICY_INVALID) a policy that does not hold over the streams it names
    (``schemas``: the input streams there are): every stream exists, has every attribute
    listed, and the condition checks over its fields as a filter's would (parsed, functions
    allow-listed, typed). A subject's attribute is only known at deploy, so ``self.NAME`` is
    checked as an untyped NULL here; the rewriter checks the bound condition again there."""
    for stream, attributes in p.streams:
        schema = schemas.get(stream)
        if schema is None:
            raise invalid(p.name, f"there is no input stream {stream!r}")
        missing = sorted((attributes or frozenset()) - set(schema.names))
        if missing:
            raise invalid(p.name, f"{stream!r} has no field {', '.join(map(repr, missing))}")
    try:
        text = p.condition(lambda stream: schemas[stream].event_time)
        if len(p.streams) == 1:
            schema = schemas[p.stream_names[0]]
            bound = bind(text, p.stream_names, None, lambda _, name: name)
        else:  # a join policy: both streams' fields, each named STREAM__FIELD
            schema = Schema(
                tuple(
                    Field(f"{s}__{f.name}", f.type)
                    for s in p.stream_names
                    for f in schemas[s].fields
                )
            )
            bound = bind(text, p.stream_names, None, lambda s, name: f"{s}__{name}")
        check_predicate(bound, schema, f"policy {p.name}")
    except Unbound as why:
        raise invalid(p.name, str(why)) from None
    except DiagramInvalid as err:
        raise invalid(p.name, "; ".join(pr.message for pr in err.problems)) from None


def policy_item(p: Policy) -> dict[str, Any]:
    """The YAML item of a policy, in its one canonical form: ``policy_from`` of it gives the
    same policy (the catalog stores it so)."""
    item: dict[str, Any] = {
        "name": p.name,
        "role": p.role,
        "streams": {s: ALL if a is None else sorted(a) for s, a in p.streams},
    }
    if p.where is not None:
        item["where"] = p.where
    whole = p.privilege != AGGREGATE or p.functions == frozenset(FUNCTIONS)
    item["privilege"] = p.privilege if whole else sorted(p.functions)
    if p.during is not None:
        item["during"] = {"start": p.during.start, "end": p.during.end}
    if p.window != Window():
        item["window"] = {"size": f"{p.window.size!r}s", "step": f"{p.window.step!r}s"}
    return item


def invalid(policy: str, reason: str) -> InvalidInput:
    return InvalidInput(
        code=codes.POLICY_INVALID, details={"policy": policy}, policy=policy, reason=reason
    )
