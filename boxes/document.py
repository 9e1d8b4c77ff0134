"""The diagram document: load it (YAML or JSON) and validate it into a Plan, without Spark.

Validation reports every problem at once, each with a stable code and a dotted path, and it
does not cascade: a box whose input is broken is not checked further, so one mistake gives
one problem. Order of checks: document shape, names, each section's parameters against the
registry's declarations, references, cycles, reachability, then schemas and expressions box by
box in data-flow order.

>>> plan = validate(load_document('''
... version: 1
... name: cheap
... inputs: {in1: {schema: {fields: {symbol: string, price: double}}}}
... boxes: {low: {type: filter, in: in1, where: "price < 10"}}
... outputs: {out: {from: low}}
... '''))
>>> plan.inputs, list(plan.outputs)
(('in1',), ['out'])

On the server the inputs are catalog streams: ``validate(doc, streams={"in1": schema})``; an
input may instead read another diagram's output (``output: NAME``, a derived input), which the
server describes in ``outputs`` (``boxes.input.Derived``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from boxes import codes, graph, limits, registry
from boxes.aggregate import AggregateBox
from boxes.base import Box, Kind, Operator, bad_name, check_params
from boxes.durations import duration_of
from boxes.errors import DiagramInvalid, Problem
from boxes.expressions.checker import LEVEL_LATTICE, LEVEL_READABLE
from boxes.input import Derived, InputBox
from boxes.labels import is_sparse, word_count
from boxes.levels import BOTTOM, TOP, Lattice
from boxes.output import OutputBox, read_on_result
from boxes.types import FIELD_NAME, Schema, parse_schema

VERSION = 1
MAX_BOXES = 1000
SECTIONS = (
    "version",
    "name",
    "description",
    "level",
    "realtime",
    "schemas",
    "inputs",
    "boxes",
    "outputs",
)


class _Loader(yaml.SafeLoader):
    """YAML with only true/false as booleans (YAML 1.1 reads a join's ``on:`` key as True),
    without aliases (nested aliases expand exponentially, the "billion laughs", and no diagram
    needs them) and at most ``MAX_DEPTH`` levels deep (``boxes/limits.py``: PyYAML composes
    recursively, so deeper nesting would exhaust Python's stack); both are refused before
    anything walks the document."""

    depth = 0

    def compose_node(self, parent, index):
        mark = self.peek_event().start_mark
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(
                None, None, "YAML anchors and aliases are not accepted in diagram documents", mark
            )
        if self.depth >= limits.MAX_DEPTH:
            raise _TooDeep(problem_mark=mark)
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


class _TooDeep(yaml.composer.ComposerError):
    """Nesting beyond ``MAX_DEPTH``: ``TOO_DEEP`` rather than a syntax error."""


_BOOL = "tag:yaml.org,2002:bool"
_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != _BOOL]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    _BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def load_document(text: str) -> dict:
    """Parse YAML or JSON text; syntax errors and duplicate keys become problems.

    Plain YAML keeps the last of two equal keys silently, which would hide a box; here each
    duplicate is a DUPLICATE_NAME problem at its path.
    """
    try:
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            duplicates = list(_duplicate_keys(node, "")) if node is not None else []
            doc = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except _TooDeep as err:
        mark = err.problem_mark
        where = f"at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise DiagramInvalid(
            [Problem(codes.TOO_DEEP, "", limits.too_deep("the document", where))]
        ) from None
    except yaml.YAMLError as err:
        raise DiagramInvalid(
            [Problem(codes.DOCUMENT_SYNTAX, "", f"not valid YAML or JSON: {err}")]
        ) from None
    if duplicates:
        raise DiagramInvalid(duplicates)
    if not isinstance(doc, dict):
        raise DiagramInvalid(
            [Problem(codes.DOCUMENT_SYNTAX, "", "a diagram document must be a mapping")]
        )
    return doc


def _duplicate_keys(node: yaml.Node, path: str) -> Iterable[Problem]:
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else None
            where = f"{path}.{name}" if path else str(name)
            if name is not None and name in seen:
                yield Problem(
                    codes.DUPLICATE_NAME,
                    where,
                    f"{name!r} appears twice (lines "
                    f"{seen[name] + 1} and {key.start_mark.line + 1})",
                )
            elif name is not None:
                seen[name] = key.start_mark.line
            yield from _duplicate_keys(value, where)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            yield from _duplicate_keys(item, f"{path}.{i}")


@dataclass(frozen=True)
class Plan:
    """A validated diagram, ready to compile: every box built, in data-flow order."""

    name: str
    inputs: tuple[str, ...]  # label-bit order: bit i <=> inputs[i] (sorted names)
    input_schemas: Mapping[str, Schema]
    input_lateness: Mapping[str, float]
    outputs: Mapping[str, Schema]
    label_words: int
    boxes: tuple[Box, ...]  # inputs, then operators in topological order, then outputs
    # The level the diagram runs at (``level:``, per COI class a company or T; absent: the
    # diagram is not at a level), and the clearance the server resolved it to (company bits).
    level: Mapping[str, str] | None = None
    clearance: int | None = None
    # The catalog's companies its level literals were checked against (server use), so a
    # rewrite checks its boxes against the same.
    lattice: Lattice | None = field(default=None, compare=False, repr=False)
    # Label-bit order when it differs from ``inputs`` (a derived input): the sorted source
    # streams, this plan's own and those of the outputs it reads. See ``label_sources``.
    sources: tuple[str, ...] = ()
    # Whether a source stream is governed by security punctuations (the server resolves it):
    # every label then carries the roles their sps deny, per field set its outputs need
    # (``boxes/punctuations/fields.py``), and each output a ``_sp_denied`` column.
    governed: bool = False
    # Words per policy word of a governed plan's labels: the roles' bits it has room for
    # (``boxes/punctuations/words.py``), fixed when the diagram is deployed.
    role_words: int = 1
    # Asks for Spark's real-time mode (``realtime: true``): the outputs that can run in it do
    # when the server has a slot for them (``server/runtime/modes.py``).
    realtime: bool = False

    @property
    def label_sources(self) -> tuple[str, ...]:
        """The source stream each label bit stands for: bit i <=> label_sources[i]."""
        return self.sources or self.inputs

    def derived(self) -> dict[str, str]:
        """Per derived input, the output it reads."""
        return {
            b.name: b.output for b in self.boxes if isinstance(b, InputBox) and b.output is not None
        }

    def streams(self) -> tuple[str, ...]:
        """The inputs that are streams (not derived)."""
        derived = self.derived()
        return tuple(n for n in self.inputs if n not in derived)

    def semantics(self) -> dict[str, str]:
        """Per output, its semantic (``boxes/output.py``)."""
        return {b.name: b.semantic for b in self.boxes if isinstance(b, OutputBox)}

    def raw_outputs(self) -> frozenset[str]:
        """The outputs with an aggregate-only aggregate upstream: their labels carry the raw
        sources apart (``boxes/labels.py``); every other output's raw sources are all of them."""
        by_name = {b.name: b for b in self.boxes}

        def summarised(name: str, seen: set[str]) -> bool:
            box = by_name[name]
            if isinstance(box, AggregateBox) and box.aggregate_only:
                return True
            seen.add(name)
            return any(summarised(u, seen) for u in box.upstream if u not in seen)

        return frozenset(
            b.name for b in self.boxes if isinstance(b, OutputBox) and summarised(b.name, set())
        )

    def to_dict(self) -> dict[str, Any]:
        out = {
            "name": self.name,
            "inputs": list(self.inputs),
            "label_words": self.label_words,
            "outputs": {n: s.to_dict() for n, s in self.outputs.items()},
            "boxes": [box.describe() for box in self.boxes],
        }
        if is_sparse(self.label_words):  # a new representation: a new fingerprint, checkpoint
            out["label"] = "sparse"
        if self.level is not None:
            out["level"] = dict(self.level)
            out["clearance"] = self.clearance
        if self.sources:
            out["sources"] = list(self.sources)
        if self.governed:  # another label layout: another fingerprint and checkpoint
            out["governed"] = "fields"  # field sets' words (boxes/punctuations/fields.py)
        if self.role_words > 1:  # wider policy words: another layout (none up to 64 roles)
            out["role_words"] = self.role_words
        if self.realtime:  # another query (real-time source and sink): another checkpoint
            out["realtime"] = True
        return out


def validate(
    doc: Mapping,
    streams: Mapping[str, Schema] | None = None,
    outputs: Mapping[str, Derived] | None = None,
    reuse: Mapping[str, Built] | None = None,
    lattice: Lattice | None = None,
) -> Plan:
    """Check a loaded document; return its Plan or raise DiagramInvalid with every problem.

    ``streams`` are the catalog's input streams (server use): inputs must name one, and a
    schema the document declares must equal the catalog's. Without it (``sluice run``) every
    input declares its schema. ``outputs`` are the other diagrams' outputs a derived input
    may read (server use). ``reuse`` (``built(doc, plan)`` of a document this one edits, as a
    rewrite does) gives boxes already built: one whose specification and upstream schemas are
    unchanged is taken as it is instead of being checked again. ``lattice`` is the catalog's
    (server use): the companies a level literal names (``LEVEL '[A, ⊥]'``) and their bits.
    Pure: no Spark, no I/O.
    """
    return _Validator(streams, outputs, reuse or {}, lattice).run(doc)


@dataclass(frozen=True)
class Built:
    """A box as ``validate`` built it: its specification, upstream schemas and whether its
    document was at a level (``_level`` readable), and the box."""

    spec: Mapping
    upstream: Mapping[str, Schema]
    levelled: bool
    box: Operator


def built(doc: Mapping, plan: Plan) -> dict[str, Built]:
    """The operators of ``plan``, validated from ``doc``, for ``validate(..., reuse=...)``."""
    schemas: dict[str, Schema] = {b.name: b.schema for b in plan.boxes}
    return {
        b.name: Built(doc["boxes"][b.name], {u: schemas[u] for u in b.upstream}, "level" in doc, b)
        for b in plan.boxes
        if isinstance(b, Operator)
    }


@dataclass
class _Node:
    """One input, box or output while the document is being checked."""

    name: str
    section: str
    cls: type[Box] | None = None
    raw: Mapping = field(default_factory=dict)
    args: dict[str, Any] = field(default_factory=dict)
    refs: tuple[tuple[str, str], ...] = ()
    schema: Schema | None = None
    sound: bool = False  # parameters and references checked without a problem
    box: Operator | None = None  # a box built against its inputs' schemas
    derived: Derived | None = None  # a derived input: the output it reads
    on_result: tuple = ()  # an output's ON RESULT sps (``boxes/output.py``)

    @property
    def path(self) -> str:
        return f"{self.section}.{self.name}"

    @property
    def checked_schema(self) -> Schema:
        """The schema, once the whole document is known to be without problems."""
        assert self.schema is not None, "only a document without problems is planned"
        return self.schema

    @property
    def checked_box(self) -> Operator:
        assert self.box is not None, "only a document without problems is planned"
        return self.box


class _Validator:
    def __init__(
        self,
        streams: Mapping[str, Schema] | None,
        outputs: Mapping[str, Derived] | None,
        reuse: Mapping[str, Built],
        lattice: Lattice | None = None,
    ) -> None:
        self.streams = streams
        self.lattice = lattice
        self.outputs = outputs or {}
        self.reuse = reuse
        self.problems: list[Problem] = []
        self.nodes: dict[str, _Node] = {}
        self.schemas: dict[str, Schema | None] = {}
        # False once some arrow is unknown (a bad reference or parameter): reachability is
        # then not reported, since the missing arrow may be the one that reaches an output.
        self.arrows_known = True

    def add(self, code: str, path: str, message: str) -> None:
        self.problems.append(Problem(code, path, message))

    def run(self, doc: Mapping) -> Plan:
        if not isinstance(doc, Mapping):
            raise DiagramInvalid(
                [Problem(codes.DOCUMENT_SYNTAX, "", "a diagram document must be a mapping")]
            )
        self.check_header(doc)
        sections = {s: self.section(doc, s) for s in ("schemas", "inputs", "boxes", "outputs")}
        self.read_schemas(sections["schemas"])
        self.read_inputs(sections["inputs"])
        self.read_boxes(sections["boxes"])
        self.read_outputs(sections["outputs"])
        level = self.read_level(doc.get("level"))
        realtime = self.read_realtime(doc.get("realtime", False))
        self.check_derived(doc)
        order, cyclic = self.check_graph()
        self.check_reachable(cyclic)
        readable = LEVEL_READABLE.set("level" in doc)
        companies = LEVEL_LATTICE.set(self.lattice)
        try:
            self.build(order)
        finally:
            LEVEL_LATTICE.reset(companies)
            LEVEL_READABLE.reset(readable)
        if self.problems:
            raise DiagramInvalid(self.problems)
        plan = self.plan(doc["name"], order)
        return replace(plan, level=level, lattice=self.lattice, realtime=realtime)

    def read_realtime(self, raw: Any) -> bool:
        """``realtime:``, whether the diagram asks for Spark's real-time mode: true or false."""
        if not isinstance(raw, bool):
            self.add(codes.WRONG_TYPE, "realtime", "'realtime' must be true or false")
            return False
        return raw

    def check_derived(self, doc: Mapping) -> None:
        """Derived inputs widen no one's reading: no diagram reads its own output; outputs
        stay strong (weak would deliver a tuple to who reads one of its sources only); a
        diagram reading one at a level runs at a level (its tuples keep theirs)."""
        derived = {n: node for n, node in self.nodes.items() if node.derived is not None}
        if not derived:
            return
        for name, node in derived.items():
            output = node.args["output"]
            if output in self.nodes and self.nodes[output].section == "outputs":
                self.add(
                    codes.DERIVED_CYCLE,
                    f"{node.path}.output",
                    codes.DERIVED_CYCLE.render(
                        diagram=doc.get("name"), chain=f"input {name} reads output {output}"
                    ),
                )
            elif node.derived is not None and node.derived.level and "level" not in doc:
                self.add(
                    codes.DERIVED_NEEDS_LEVEL,
                    f"{node.path}.output",
                    codes.DERIVED_NEEDS_LEVEL.render(name=name, output=output),
                )
        for name, node in self.nodes.items():
            if node.section == "outputs" and node.args.get("semantic") == "weak":
                self.add(
                    codes.DERIVED_WEAK,
                    f"{node.path}.semantic",
                    codes.DERIVED_WEAK.render(name=name),
                )

    def read_level(self, raw: Any) -> Mapping[str, str] | None:
        """``level:``, per conflict-of-interest class a company, ``T`` or ``⊥``; which classes
        and companies exist is the server's to check (``LEVEL_BAD_SHAPE`` there)."""
        if raw is None:
            return None
        if not isinstance(raw, Mapping) or len(raw) > 64:
            self.add(
                codes.WRONG_TYPE,
                "level",
                "'level' maps conflict-of-interest classes to a company, T or ⊥ (at most 64)",
            )
            return None
        level = {}
        for coi, entry in raw.items():
            if not isinstance(coi, str) or not FIELD_NAME.match(coi):
                self.add(codes.INVALID_NAME, "level", bad_name(str(coi)))
            elif not isinstance(entry, str) or not (
                entry in (BOTTOM, TOP) or FIELD_NAME.match(entry)
            ):
                self.add(codes.WRONG_TYPE, f"level.{coi}", "an entry is a company's name, T or ⊥")
            else:
                level[coi] = entry
        return level

    def check_header(self, doc: Mapping) -> None:
        for key in doc:
            if key not in SECTIONS:
                self.add(
                    codes.UNKNOWN_PARAMETER,
                    str(key),
                    f"unknown section {key!r}; expected " + ", ".join(SECTIONS),
                )
        if "version" not in doc:
            self.add(
                codes.MISSING_PARAMETER,
                "version",
                f"missing 'version' (this server reads version {VERSION})",
            )
        elif doc["version"] != VERSION or isinstance(doc["version"], bool):
            self.add(
                codes.UNSUPPORTED_VERSION,
                "version",
                f"version {doc['version']!r} is not supported; this server reads version {VERSION}",
            )
        name = doc.get("name")
        if name is None:
            self.add(codes.MISSING_PARAMETER, "name", "missing 'name' (the diagram's name)")
        elif not isinstance(name, str):
            self.add(codes.WRONG_TYPE, "name", "'name' must be text")
        elif not FIELD_NAME.match(name):
            self.add(codes.INVALID_NAME, "name", bad_name(name))

    def section(self, doc: Mapping, key: str) -> Mapping:
        value = doc.get(key)
        if value is None:
            if key in ("inputs", "outputs"):
                self.add(
                    codes.MISSING_PARAMETER, key, f"a diagram needs at least one entry in {key!r}"
                )
            return {}
        if not isinstance(value, Mapping):
            self.add(codes.WRONG_TYPE, key, f"{key!r} must be a mapping of name to definition")
            return {}
        if not value and key in ("inputs", "outputs"):
            self.add(codes.MISSING_PARAMETER, key, f"a diagram needs at least one entry in {key!r}")
        return value

    def read_schemas(self, raw: Mapping) -> None:
        for name, spec in raw.items():
            if self.valid_name(name, f"schemas.{name}"):
                self.schemas[name], found = parse_schema(spec, f"schemas.{name}")
                self.problems.extend(found)

    def declare(
        self, name: Any, section: str, raw: Any, cls: type[Box] | None, nullable: bool = False
    ) -> _Node | None:
        """Register a name (unique across inputs, boxes and outputs) and check its parameters."""
        path = f"{section}.{name}"
        if not self.valid_name(name, path):
            return None
        if name in self.nodes:
            self.add(
                codes.DUPLICATE_NAME,
                path,
                f"{name!r} is already the name of "
                f"{self.nodes[name].section}.{name}; "
                "names are shared by inputs, boxes and outputs",
            )
            return None
        node = self.nodes[name] = _Node(name, section)
        if raw is None and nullable:
            raw = {}
        if not isinstance(raw, Mapping):
            self.add(codes.WRONG_TYPE, path, "must be a mapping of parameters")
            self.arrows_known = False
            return None
        if cls is None:
            node.refs = tuple((v, path) for v in _names_in(raw.values()))
            return node
        node.cls, node.raw = cls, raw
        node.args, found = check_params(raw, cls.params, path, ignore=("type",))
        self.problems.extend(found)
        node.refs = tuple(cls.upstream_refs(node.args, path))
        node.sound = not found
        if any(
            p.name not in node.args
            for p in cls.params
            if p.kind in (Kind.INPUT_REF, Kind.INPUT_REFS)
        ):
            self.arrows_known = False
        return node

    def valid_name(self, name: Any, path: str) -> bool:
        if isinstance(name, str) and FIELD_NAME.match(name):
            return True
        self.add(codes.INVALID_NAME, path, bad_name(name))
        return False

    def read_inputs(self, raw: Mapping) -> None:
        for name, spec in raw.items():
            node = self.declare(name, "inputs", spec, InputBox, nullable=True)
            if node is not None and node.cls is not None:
                node.schema = self.input_schema(node)

    def input_schema(self, node: _Node) -> Schema | None:
        if "output" in node.args:
            return self.derived_schema(node)
        declared, path = node.args.get("schema"), f"{node.path}.schema"
        schema: Schema | None = None
        if isinstance(declared, str):
            if declared not in self.schemas:
                self.add(codes.UNKNOWN_SCHEMA, path, f"no schema {declared!r} under 'schemas'")
            schema = self.schemas.get(declared)
        elif declared is not None:
            schema, found = parse_schema(declared, path)
            self.problems.extend(found)
        if self.streams is None:
            if node.raw.get("schema") is None:
                self.add(
                    codes.MISSING_PARAMETER,
                    path,
                    "an input run outside the server declares its schema",
                )
            return schema
        catalog = self.streams.get(node.name)
        if catalog is None:
            self.add(codes.NOT_FOUND, node.path, f"there is no input stream {node.name!r}")
        elif schema is not None and schema != catalog:
            self.add(
                codes.SCHEMA_MISMATCH,
                path,
                f"the declared schema differs from stream "
                f"{node.name!r}'s schema {catalog.to_dict()}",
            )
            return None
        return catalog

    def derived_schema(self, node: _Node) -> Schema | None:
        """A derived input takes its output's schema; the output must be one it may read."""
        if node.raw.get("schema") is not None:
            self.add(
                codes.DERIVED_INPUT_SHAPE,
                f"{node.path}.schema",
                codes.DERIVED_INPUT_SHAPE.render(name=node.name),
            )
            return None
        output = node.args["output"]
        node.derived = self.outputs.get(output)
        if node.derived is None:
            self.add(codes.NOT_FOUND, f"{node.path}.output", f"there is no output {output!r}")
            return None
        return node.derived.schema

    def read_boxes(self, raw: Mapping) -> None:
        if len(raw) > MAX_BOXES:
            self.add(
                codes.TOO_MANY_BOXES,
                "boxes",
                f"{len(raw)} boxes; a diagram may have at most {MAX_BOXES}",
            )
        for name, spec in raw.items():
            self.declare(name, "boxes", spec, self.box_class(name, spec))

    def box_class(self, name: Any, spec: Any) -> type[Box] | None:
        path = f"boxes.{name}.type"
        if not isinstance(spec, Mapping):
            return None
        kind = spec.get("type")
        if kind is None:
            self.add(
                codes.MISSING_PARAMETER,
                path,
                "missing 'type'; one of " + ", ".join(_operator_types()),
            )
        elif not isinstance(kind, str):
            self.add(codes.WRONG_TYPE, path, "'type' must be text")
        elif kind not in _operator_types():
            where = f"; declare {kind}s under '{kind}s'" if kind in ("input", "output") else ""
            self.add(
                codes.UNKNOWN_BOX_TYPE,
                path,
                f"unknown box type {kind!r}{where}; one of " + ", ".join(_operator_types()),
            )
        else:
            return registry.get(kind)
        return None

    def read_outputs(self, raw: Mapping) -> None:
        for name, spec in raw.items():
            self.declare(name, "outputs", spec, OutputBox)

    def check_graph(self) -> tuple[list[_Node], set[str]]:
        """Resolve references; return the nodes in data-flow order and the names on cycles."""
        upstream: dict[str, list[str]] = {}
        for node in self.nodes.values():
            upstream[node.name] = []
            for ref, path in node.refs:
                target = self.nodes.get(ref)
                if node.cls is None and (target is None or target.section == "outputs"):
                    continue
                if target is None or target.section == "outputs":
                    what = "an output, which cannot be read" if target else "nothing"
                    self.add(
                        codes.UNKNOWN_INPUT,
                        path,
                        f"{ref!r} names {what}; expected an input or a box",
                    )
                    node.sound = False
                    self.arrows_known = False
                else:
                    upstream[node.name].append(ref)
        order = graph.topological(upstream)
        placed = {n for n in order}
        cyclic: set[str] = set()
        position = {name: i for i, name in enumerate(self.nodes)}
        for name in self.nodes:
            if name not in placed and name not in cyclic:
                cycle = graph.find_cycle(name, upstream, placed, cyclic)
                if cycle:
                    first = min(range(len(cycle)), key=lambda k: position[cycle[k]])
                    cycle = cycle[first:] + cycle[:first]  # start where the document does
                    cyclic.update(cycle)
                    self.add(
                        codes.DIAGRAM_CYCLE,
                        self.nodes[cycle[0]].path,
                        " -> ".join(cycle + [cycle[0]]) + " form a cycle",
                    )
        return [self.nodes[n] for n in order], cyclic

    def check_reachable(self, cyclic: set[str]) -> None:
        seen = {n for n, node in self.nodes.items() if node.section == "outputs"}
        if not seen or not self.arrows_known:
            return
        stack = list(seen)
        while stack:
            for ref, _ in self.nodes[stack.pop()].refs:
                if ref in self.nodes and ref not in seen:
                    seen.add(ref)
                    stack.append(ref)
        for name, node in self.nodes.items():
            if name not in seen and name not in cyclic:
                self.add(codes.UNREACHABLE, node.path, f"{name!r} does not lead to any output")

    def build(self, order: list[_Node]) -> None:
        """Check each box against its inputs' schemas; skip boxes whose inputs are broken."""
        for node in order:
            if node.section == "inputs" or not node.sound:
                continue
            upstream = {
                ref: schema
                for ref, _ in node.refs
                if (schema := self.nodes[ref].schema) is not None
            }
            if len(upstream) < len({ref for ref, _ in node.refs}):
                continue
            if node.section == "outputs":
                node.schema = upstream[node.args["from"]]
                try:
                    node.on_result = read_on_result(
                        node.args.get("on_result"), f"{node.path}.on_result"
                    )
                except DiagramInvalid as err:
                    self.problems.extend(err.problems)
                continue
            assert node.cls is not None and issubclass(node.cls, Operator)  # a sound box's type
            known = self.reuse.get(node.name)
            if (
                known is not None
                and known.spec == node.raw
                and known.upstream == upstream
                and known.levelled == LEVEL_READABLE.get()
            ):
                node.box, node.schema = known.box, known.box.schema
                continue
            try:
                node.box = node.cls.build(node.name, node.args, upstream, node.path)
                node.schema = node.box.schema
            except DiagramInvalid as err:
                self.problems.extend(err.problems)

    def plan(self, name: str, order: list[_Node]) -> Plan:
        inputs = tuple(sorted(n.name for n in self.nodes.values() if n.section == "inputs"))
        derived = {n: d for n in inputs if (d := self.nodes[n].derived) is not None}
        sources = tuple(
            sorted(
                {n for n in inputs if n not in derived}.union(
                    *(d.sources for d in derived.values())
                )
            )
        )
        bits = {name: i for i, name in enumerate(sources)}
        words = word_count(len(sources))
        lateness = {n: duration_of(self.nodes[n].args["lateness"]) for n in inputs}
        operators = tuple(node.checked_box for node in order if node.section == "boxes")
        counted = any(b.by_arrival for b in operators)
        input_boxes = tuple(
            InputBox(n, self.nodes[n].checked_schema, bits[n], words, lateness[n], counted)
            if n not in derived
            else InputBox(
                n,
                derived[n].schema,
                -1,
                words,
                lateness[n],
                counted,
                self.nodes[n].args["output"],
                tuple(bits[s] for s in derived[n].sources),
            )
            for n in inputs
        )
        outputs = tuple(
            OutputBox(
                node.name,
                node.checked_schema,
                node.args["from"],
                node.args["semantic"],
                node.on_result,
            )
            for node in order
            if node.section == "outputs"
        )
        return Plan(
            name,
            inputs,
            {b.name: b.schema for b in input_boxes},
            lateness,
            {o.name: o.schema for o in outputs},
            words,
            input_boxes + operators + outputs,
            sources=sources if derived else (),
        )


def _names_in(values: Iterable[Any]) -> list[str]:
    """Names a box of unknown type seems to read: only so its inputs do not look unreachable."""
    found: list[str] = []
    for value in values:
        found.extend(
            v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)
        )
    return found


def _operator_types() -> list[str]:
    return [n for n in registry.names() if n not in ("input", "output")]
