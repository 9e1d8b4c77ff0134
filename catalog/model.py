"""The OxRBAC vocabulary: actions, object types, and the immutable records the snapshot holds.

Names are checked here once, so storage, the authorizer and every caller agree on what a valid
name is. Names are ASCII identifiers: they appear unquoted in diagram documents, and ASCII-only
login names rule out look-alike accounts (a Cyrillic ``а`` in ``аdmin``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from boxes import codes
from boxes.errors import InvalidInput

NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
USER_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.@-]{0,63}")


class Action(str, Enum):
    VIEW_CATALOG = "VIEW_CATALOG"
    VIEW_OBJECT = "VIEW_OBJECT"
    ADD = "ADD"
    SET_QUERY_STATUS = "SET_QUERY_STATUS"
    SUBSCRIBE = "SUBSCRIBE"
    READ_TUPLE = "READ_TUPLE"
    # Receive results that summarise an input stream (an aggregate-only aggregate's), never
    # one of its raw tuples: Borealis' aggregate-read right (docs/labels.md)
    READ_AGGREGATE = "READ_AGGREGATE"
    WRITE = "WRITE"
    CHANGE_PERM = "CHANGE_PERM"
    CHANGE_SYSTEM = "CHANGE_SYSTEM"
    USE = "USE"  # put a box of this box type in a diagram (operator-based access control)


class ObjectType(str, Enum):
    SYSTEM = "system"
    SCHEMA = "schema"
    STREAM = "stream"
    DIAGRAM = "diagram"
    BOX = "box"
    OUTPUT = "output"
    BOX_TYPE = "box_type"


A = Action
# What each kind of object can meaningfully be asked for; anything else is refused, never granted.
APPLICABLE: dict[str, frozenset[Action]] = {
    "system": frozenset({A.VIEW_CATALOG, A.VIEW_OBJECT, A.ADD, A.CHANGE_PERM, A.CHANGE_SYSTEM}),
    "schema": frozenset({A.VIEW_OBJECT, A.CHANGE_PERM}),
    "input": frozenset(
        {A.VIEW_OBJECT, A.SUBSCRIBE, A.READ_TUPLE, A.READ_AGGREGATE, A.WRITE, A.CHANGE_PERM}
    ),
    "derived": frozenset({A.VIEW_OBJECT, A.SUBSCRIBE, A.CHANGE_PERM}),
    "diagram": frozenset({A.VIEW_OBJECT, A.SET_QUERY_STATUS, A.CHANGE_PERM}),
    "box": frozenset({A.VIEW_OBJECT, A.CHANGE_PERM}),
    "output": frozenset({A.VIEW_OBJECT, A.SUBSCRIBE, A.CHANGE_PERM}),
    "box_type": frozenset({A.VIEW_OBJECT, A.USE, A.CHANGE_PERM}),
}


@dataclass(frozen=True)
class CatalogObject:
    """One owned object. ``kind`` tells input from derived streams; ``spec`` is its stored JSON;
    ``refs`` are the objects it uses (a stream's schema, a diagram's inputs).

    ``name`` is the object's unique key (what the runtime, its logs and the history use);
    ``public`` is the name callers address it by and are shown, the key unless ``public_name``
    says otherwise (an object named like one its creator could not see: ``catalog.names``).
    """

    id: int
    type: ObjectType
    name: str
    owner_user: str
    owner_role: str
    kind: str | None = None
    parent_id: int | None = None
    source_index: int | None = None
    spec: str | None = None
    status: str | None = None
    created_at: float = 0.0
    refs: tuple[int, ...] = ()
    public_name: str | None = None

    @property
    def public(self) -> str:
        return self.public_name or self.name

    @property
    def document(self) -> dict[str, Any]:
        """``spec`` read: a diagram's document, a schema's definition."""
        assert self.spec is not None, f"{self.type.value} {self.name} stores no document"
        return json.loads(self.spec)

    @property
    def category(self) -> str:
        """The key of :data:`APPLICABLE` for this object."""
        if self.type is ObjectType.STREAM:
            assert self.kind is not None, "every stream is an input or a derived stream"
            return self.kind
        return self.type.value

    @property
    def applicable(self) -> frozenset[Action]:
        return APPLICABLE[self.category]

    def to_dict(self) -> dict:
        out = {
            "id": self.id,
            "type": self.type.value,
            "name": self.public,
            "owner": {"user": self.owner_user, "role": self.owner_role},
        }
        if self.kind:
            out["kind"] = self.kind
        if self.source_index is not None:
            out["source_index"] = self.source_index
        return out


@dataclass(frozen=True)
class User:
    id: int
    name: str
    enabled: bool
    roles: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True)
class Session:
    """A login: which user, which of its roles are active, and until when (epoch seconds)."""

    id: int
    user_id: int
    roles: frozenset[str]
    expires_at: float


@dataclass(frozen=True)
class Subject:
    """Who asks: the session and the user behind it, as resolved from a session token."""

    session_id: int
    user_id: int
    user_name: str
    roles: frozenset[str]


@dataclass(frozen=True)
class Grant:
    """One explicit permission row, with who gave it (for the audit trail and listings)."""

    role: str
    action: Action
    object_id: int
    granted_by: str


def check_name(value: object, what: str, pattern: re.Pattern[str] = NAME) -> str:
    """``value`` if it is a valid name; else ``INVALID_NAME``, quoting at most 40 characters."""
    if isinstance(value, str) and pattern.fullmatch(value):
        return value
    raise InvalidInput(
        name_problem(value, what, pattern), code=codes.INVALID_NAME, details={"field": what}
    )


def name_problem(value: object, what: str, pattern: re.Pattern[str] = NAME) -> str:
    """What is wrong with a name, in the same words wherever it is found (catalog or guard)."""
    shown = repr(value)[:40] + ("…" if len(repr(value)) > 40 else "")
    allowed = "letters, digits and '_'" + (", '.', '@', '-'" if pattern is USER_NAME else "")
    return (
        f"{what} name {shown} must start with an ASCII letter and contain only "
        f"{allowed} (at most 64 characters)"
    )


def _parse(kind: type[Enum], value: object, what: str, code: str):
    try:
        return kind(value)
    except ValueError:
        raise InvalidInput(
            f"unknown {what} {str(value)[:40]!r}; expected one of "
            + ", ".join(k.value for k in kind),
            code=code,
        ) from None


def parse_action(value: object) -> Action:
    return _parse(Action, value, "action", codes.UNKNOWN_ACTION)


def parse_type(value: object) -> ObjectType:
    return _parse(ObjectType, value, "object type", codes.UNKNOWN_TYPE)
