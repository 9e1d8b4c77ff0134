"""What every box type declares: its parameters, its output schema and its compile step.

A box type is declared once, as Node-RED nodes are: each parameter has a kind, whether it is
required, a default and a description. The document validator checks every box's raw
parameters against that declaration (shape, required, unknown) before the box itself checks
meaning (fields, types, expressions); the editor builds its forms from the same declaration,
served as JSON by the registry. A built box is immutable and compiles to Spark without
re-checking anything.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar

from boxes import codes
from boxes.canonical import canonical
from boxes.durations import parse_duration
from boxes.errors import DiagramInvalid, Problem, kind_of
from boxes.lineage import Lineage, strictest
from boxes.types import FIELD_NAME, Schema

# More rows than any window needs; a smaller ceiling is a cost limit (boxes/cost.py).
MAX_COUNT = 10_000_000


class Kind(str, Enum):
    """The kind of value a parameter takes: tells the validator its shape and the editor its
    widget."""

    INPUT_REF = "input ref"  # the name of an input or box
    INPUT_REFS = "input refs"  # a list of such names
    PREDICATE = "predicate"  # a boolean expression
    EXPRESSIONS = "named expressions"  # {output field: expression}
    AGGREGATES = "named aggregates"  # {output field: aggregate expression}
    FIELD_LIST = "field list"  # a list of field names
    DURATION = "duration"  # '500ms', '10s', '1m', '2h', '1d'
    COUNT = "count"  # a whole number of tuples, 1 or more
    SLIDE = "slide"  # a duration (time window) or a count (count window)
    # A mapping of the parameter's own declared keys: a window ({size, slide} or {rows, slide}),
    # a join's count bound ({left, right}).
    WINDOW = "window"
    FLAG = "flag"  # true or false
    SCHEMA_REF = "schema ref"  # a schema name, or an inline schema
    CHOICE = "choice"  # one of the parameter's ``choices``
    OUTPUT_REF = "output ref"  # the name of another diagram's output (a derived input)
    POLICY = "policy"  # a list of security punctuations (JSON objects)

    @property
    def json_type(self) -> str:
        return {
            Kind.INPUT_REFS: "array",
            Kind.FIELD_LIST: "array",
            Kind.EXPRESSIONS: "object",
            Kind.AGGREGATES: "object",
            Kind.WINDOW: "object",
            Kind.COUNT: "integer",
            Kind.FLAG: "boolean",
            Kind.POLICY: "array",
        }.get(self, "string")


@dataclass(frozen=True)
class Param:
    """One declared parameter of a box type."""

    name: str
    kind: Kind
    description: str
    required: bool = True
    default: Any = None
    params: tuple[Param, ...] = ()  # the keys of a WINDOW mapping
    choices: tuple[str, ...] = ()  # the values a CHOICE takes

    def to_dict(self) -> dict[str, Any]:
        out = {
            "name": self.name,
            "type": self.kind.json_type,
            "kind": self.kind.value,
            "required": self.required,
            "default": self.default,
            "description": self.description,
        }
        if self.params:
            out["params"] = [p.to_dict() for p in self.params]
        if self.choices:
            out["choices"] = list(self.choices)
        return out


def _is_name_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _is_text_map(value: Any) -> bool:
    return isinstance(value, Mapping) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


_SHAPES = {
    Kind.INPUT_REF: (lambda v: isinstance(v, str), "a name"),
    Kind.INPUT_REFS: (_is_name_list, "a list of names"),
    Kind.PREDICATE: (lambda v: isinstance(v, str), "an expression (text)"),
    Kind.EXPRESSIONS: (_is_text_map, "a mapping of field name to expression text"),
    Kind.AGGREGATES: (_is_text_map, "a mapping of field name to aggregate expression text"),
    Kind.FIELD_LIST: (_is_name_list, "a list of field names"),
    Kind.WINDOW: (lambda v: isinstance(v, Mapping), "a mapping"),
    Kind.FLAG: (lambda v: isinstance(v, bool), "true or false"),
    Kind.SCHEMA_REF: (lambda v: isinstance(v, (str, Mapping)), "a schema name or a schema"),
    Kind.OUTPUT_REF: (lambda v: isinstance(v, str), "an output's name"),
    Kind.POLICY: (
        lambda v: isinstance(v, list) and all(isinstance(x, Mapping) for x in v),
        "a list of sps (JSON objects)",
    ),
}


def check_params(
    raw: Mapping[str, Any], declared: Sequence[Param], path: str, ignore: Sequence[str] = ()
) -> tuple[dict[str, Any], list[Problem]]:
    """Check ``raw`` against ``declared``: unknown, missing and wrongly shaped values.

    Returns the arguments with defaults filled in, and the problems. A parameter with a
    problem is left out of the arguments, so later checks do not report it again.
    """
    problems: list[Problem] = []
    by_name = {p.name: p for p in declared}
    for key in raw:
        if key not in by_name and key not in ignore:
            expected = ", ".join(repr(p.name) for p in declared)
            problems.append(
                Problem(
                    codes.UNKNOWN_PARAMETER,
                    f"{path}.{key}",
                    f"unknown parameter {key!r}; expected {expected}",
                )
            )
    args: dict[str, Any] = {}
    for param in declared:
        ppath = f"{path}.{param.name}"
        if param.name not in raw or raw[param.name] is None:
            if param.required:
                problems.append(
                    Problem(
                        codes.MISSING_PARAMETER,
                        ppath,
                        f"missing parameter {param.name!r} ({param.description})",
                    )
                )
            elif param.default is not None:
                args[param.name] = param.default
            continue
        value = raw[param.name]
        checked, found = _check_value(value, param, ppath)
        problems.extend(found)
        if not found:
            args[param.name] = checked
    return args, problems


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_COUNT


def _check_value(value: Any, param: Param, path: str) -> tuple[Any, list[Problem]]:
    """The value (a WINDOW with its defaults filled in) and its problems."""
    if param.kind is Kind.SLIDE:
        kind = Kind.COUNT if isinstance(value, int) else Kind.DURATION
        return _check_value(value, Param(param.name, kind, param.description), path)
    if param.kind is Kind.COUNT:
        if not _is_count(value):
            return value, [
                Problem(
                    codes.INVALID_COUNT,
                    path,
                    codes.INVALID_COUNT.render(name=param.name, value=value, limit=MAX_COUNT),
                )
            ]
        return value, []
    if param.kind is Kind.DURATION:
        if parse_duration(value) is None:
            return value, [
                Problem(
                    codes.INVALID_DURATION,
                    path,
                    f"{value!r} is not a duration; write a number and a unit "
                    "(ms, s, m, h, d), such as '10s' or '500ms'",
                )
            ]
        return value, []
    if param.kind is Kind.CHOICE:
        if value in param.choices:
            return value, []
        shape = "one of " + ", ".join(map(repr, param.choices))
        return value, [Problem(codes.WRONG_TYPE, path, f"{param.name!r} must be {shape}")]
    accepts, shape = _SHAPES[param.kind]
    if not accepts(value):
        found = f"not {kind_of(value)}"
        if isinstance(value, dict):  # a mapping with an entry of the wrong kind
            key, entry = next((k, v) for k, v in value.items() if not _is_text_map({k: v}))
            found = f"{key!r} is {kind_of(entry)}" if isinstance(key, str) else "a key is not text"
        return value, [Problem(codes.WRONG_TYPE, path, f"{param.name!r} must be {shape}, {found}")]
    if param.kind is Kind.WINDOW:
        return check_params(value, param.params, path)
    if param.kind in (Kind.EXPRESSIONS, Kind.AGGREGATES):
        return value, [
            Problem(codes.INVALID_NAME, f"{path}.{name}", bad_name(name))
            for name in value
            if not FIELD_NAME.match(name)
        ]
    return value, []


def bad_name(name: Any) -> str:
    """Why a field or box name is refused (one wording for every name)."""
    return (
        f"{name!r} is not a valid name: start with a letter, then letters, digits or '_', "
        "at most 64 characters"
    )


class Box:
    """A built box: its name, the boxes it reads, and its output schema.

    Subclasses (one module per type) set ``type_name``, ``description`` and ``params``, and
    implement ``build`` (check meaning, raise DiagramInvalid with every problem) and
    ``compile`` (upstream DataFrames by name -> this box's DataFrame, label included).
    """

    type_name: ClassVar[str]
    description: ClassVar[str]
    params: ClassVar[tuple[Param, ...]]

    name: str
    schema: Schema

    @classmethod
    def declaration(cls) -> dict[str, Any]:
        return {
            "type": cls.type_name,
            "description": cls.description,
            "params": [p.to_dict() for p in cls.params],
        }

    @classmethod
    def upstream_refs(cls, args: Mapping[str, Any], path: str) -> list[tuple[str, str]]:
        """(name, path) of every input or box this box reads, in parameter order."""
        refs: list[tuple[str, str]] = []
        for param in cls.params:
            value = args.get(param.name)
            if param.kind is Kind.INPUT_REF and isinstance(value, str):
                refs.append((value, f"{path}.{param.name}"))
            elif param.kind is Kind.INPUT_REFS and isinstance(value, list):
                refs.extend((v, f"{path}.{param.name}.{i}") for i, v in enumerate(value))
        return refs

    @property
    def upstream(self) -> tuple[str, ...]:
        return ()

    @property
    def by_arrival(self) -> bool:
        """Whether the box breaks event-time ties by arrival order (it holds count windows):
        then the plan's inputs keep each tuple's arrival number (``boxes/arrival.py``)."""
        return False

    def parameters(self) -> dict[str, Any]:
        """Everything the box computes with beside its name and schema, as JSON that is the
        same in every process (``canonical.py``): what a plan's fingerprint is made of."""
        return {
            f.name: canonical(getattr(self, f.name))
            for f in dataclasses.fields(self)  # type: ignore[arg-type]
            if f.name not in ("name", "schema")
        }

    def describe(self) -> dict[str, Any]:
        """The box as the API shows it in a plan."""
        return {
            "name": self.name,
            "type": self.type_name,
            "in": list(self.upstream),
            "schema": self.schema.to_dict(),
        }


class Operator(Box, ABC):
    """A box between inputs and outputs, built from checked arguments and upstream schemas."""

    @classmethod
    @abstractmethod
    def build(
        cls, name: str, args: Mapping[str, Any], upstream: Mapping[str, Schema], path: str
    ) -> Operator:
        """Check the arguments' meaning against the upstream schemas; raise every problem."""

    @abstractmethod
    def compile(self, frames: Mapping[str, Any]):
        """This box's DataFrame (user fields, then the label) from its upstream DataFrames."""

    def lineage(self, upstream: Mapping[str, Lineage]) -> Lineage:
        """Which input fields each of this box's fields comes from, and which decide its
        tuples (``boxes/lineage.py``), from its upstream boxes'; by default the strictest."""
        return strictest(self.schema.names, (upstream[u] for u in self.upstream))


@dataclass
class Problems:
    """Collects problems while a box checks its arguments, then raises them all at once."""

    items: list[Problem] = field(default_factory=list)

    def add(self, code: str, path: str, message: str) -> None:
        self.items.append(Problem(code, path, message))

    def collect(self, check, *args):
        """Run an expression check; keep its problems instead of stopping at the first."""
        try:
            return check(*args)
        except DiagramInvalid as err:
            self.items.extend(err.problems)
            return None

    def raise_any(self) -> None:
        if self.items:
            raise DiagramInvalid(self.items)
