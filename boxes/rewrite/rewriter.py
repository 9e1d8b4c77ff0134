"""Query rewriting (seed 002, section 5.3): a plan, the policies, the subject -> a rewritten
plan with only authorized tuples in it, or a refusal naming the stream no policy authorizes.

First pass (which secure operators apply, Definitions 2-4):
* secure read on an input: a read policy on that one stream covering every attribute of it
  the query uses (its "ATTs");
* secure join on a join box: a join policy on exactly the two streams the join's sides
  derive from, covering the attributes used of both;
* secure aggregate on an aggregate box: a policy on exactly the streams below it whose
  privilege includes every function the box computes (a time window only).
An input no secure operator covers denies the whole query (Algorithm 1, lines 4-5).

Second pass (Algorithm 3): a secure read is pushed down the data flow to a secure join or
aggregate that can merge it, past filters and maps that keep the fields it reads: a join
then keeps ``(read_left AND read_right) OR join_policy`` and an aggregate ``read OR
aggregate_policy`` (with the window widened to the policy's minimum size and step).
Otherwise the read is applied where the paper applies it, right after the input, followed by
a projection to the attributes the query uses when the next box picks its own fields. A
join's own secure operator is treated the same way on the join's output.

Policies of the same kind on one point are alternatives (OR: the union of the views they
grant, Definition 2). Unlike the paper, where a read may feed several branches it is applied
on every branch that does not merge it, so no branch ever sees more than it is granted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from boxes import codes, registry
from boxes.aggregate import AggregateBox
from boxes.base import Kind
from boxes.document import Plan, built, validate
from boxes.errors import Denied, DiagramInvalid
from boxes.expressions import check_predicate
from boxes.filter import FilterBox
from boxes.input import InputBox
from boxes.join import JoinBox
from boxes.map import MapBox
from boxes.rewrite.graph import Graph, analyse
from boxes.rewrite.policy import AGGREGATE, JOIN, READ, Policy, Subject
from boxes.rewrite.predicates import Unbound, bind

# A secure operator's condition: a policy, or an AND / OR of conditions.
Cond = tuple[str, Any]


@dataclass(frozen=True)
class Rewritten:
    document: dict[str, Any]
    plan: Plan
    added: tuple[dict[str, Any], ...]  # what the rewriting added, for the editor to show
    skipped: tuple[dict[str, str], ...]  # the subject's policies that did not apply, and why


def rewrite(
    document: Mapping[str, Any], plan: Plan, policies: Iterable[Policy], subject: Subject
) -> Rewritten:
    """Rewrite ``document`` (validated as ``plan``) under the policies of the subject's roles.

    Pure. Raises Denied REWRITE_DENIED naming the first unauthorized input (sorted), or
    REWRITE_UNSUPPORTED for a box type the rewriter does not know.
    """
    mine = [p for p in policies if p.role in subject.roles]
    return _Rewriter(document, plan, analyse(plan), mine, subject).run()


@dataclass
class _Rewriter:
    document: Mapping[str, Any]
    plan: Plan
    graph: Graph
    policies: list[Policy]
    subject: Subject
    skipped: list[dict[str, str]] = field(default_factory=list)
    added: list[dict[str, Any]] = field(default_factory=list)
    rendered: dict[tuple[Policy, str], str | Unbound] = field(default_factory=dict)

    def run(self) -> Rewritten:
        self.index: dict[tuple[str, frozenset[str]], list[Policy]] = {}
        for p in self.policies:
            self.index.setdefault((p.privilege, frozenset(p.stream_names)), []).append(p)
        boxes = self.graph.boxes.values()
        reads = {b.name: self.reads(b.name) for b in boxes if isinstance(b, InputBox)}
        joins = {b.name: self.joins(b) for b in boxes if isinstance(b, JoinBox)}
        aggs = {b.name: self.aggregates(b) for b in boxes if isinstance(b, AggregateBox)}
        covered = {s for s, ps in reads.items() if ps}
        for name, ps in (*joins.items(), *aggs.items()):
            if ps:
                covered |= self.graph.sources[name]
        for stream in sorted(self.plan.inputs):
            if stream not in covered:
                raise Denied(
                    code=codes.REWRITE_DENIED,
                    details={"stream": stream, "skipped": self.skipped},
                    stream=stream,
                    why=self.why_not(stream),
                )
        doc = _copy(self.document)
        self.edits = _Edits(doc, self.plan)
        self.absorbing = {n for n, ps in (*joins.items(), *aggs.items()) if ps}
        self.pushed: dict[tuple[str, int], Cond] = {}
        for box in self.plan.boxes:
            if reads.get(box.name):
                self.route(box.name, _any(reads[box.name]), "secure read")
            elif joins.get(box.name):
                assert isinstance(box, JoinBox)
                self.secure_join(box, joins[box.name])
            elif aggs.get(box.name):
                assert isinstance(box, AggregateBox)
                self.secure_aggregate(box, aggs[box.name])
        # Every predicate was checked where it goes, so a failure here is the rewriter's bug:
        # an internal error (the server logs it with an incident), not the user's mistake.
        try:
            reuse = built(self.document, self.plan)  # boxes the rewriting left as they were
            rewritten = validate(
                doc, streams=self.plan.input_schemas, reuse=reuse, lattice=self.plan.lattice
            )
        except DiagramInvalid as err:
            raise RuntimeError(f"the rewritten document does not validate: {err}") from err
        if dict(rewritten.outputs) != dict(self.plan.outputs):
            raise RuntimeError("the rewriting changed an output's schema")
        # The level's clearance and sps' governance are the server's to resolve; kept.
        rewritten = replace(
            rewritten,
            clearance=self.plan.clearance,
            governed=self.plan.governed,
            role_words=self.plan.role_words,
        )
        return Rewritten(doc, rewritten, tuple(self.added), tuple(self.skipped))

    # first pass: which policies apply where

    def reads(self, stream: str) -> list[Policy]:
        return self.applicable(READ, {stream}, stream)

    def joins(self, box: JoinBox) -> list[Policy]:
        return self.applicable(JOIN, set(self.graph.sources[box.name]), box.name)

    def aggregates(self, box: AggregateBox) -> list[Policy]:
        functions = {a.function for _, a in box.aggregates}
        found = []
        for p in self.applicable(AGGREGATE, set(self.graph.sources[box.name]), box.source):
            if functions <= p.functions:
                found.append(p)
            else:
                missing = ", ".join(sorted(functions - p.functions))
                self.skip([p], f"{box.name!r} computes {missing}, which the policy does not grant")
        if found and box.rows is not None:
            self.skip(found, f"{box.name!r} counts rows; a policy's window bounds time")
            return []
        return found

    def applicable(self, privilege: str, streams: set[str], point: str) -> list[Policy]:
        found = []
        for p in self.index.get((privilege, frozenset(streams)), []):
            uncovered = [
                f"{s}.{a}" for s in p.stream_names for a in p.uncovered(s, self.graph.used[s])
            ]
            if uncovered:
                self.skip([p], f"the query uses {', '.join(uncovered)}, which it does not cover")
                continue
            try:
                self.render(("policy", p), point)
            except Unbound as why:
                self.skip([p], str(why))
                continue
            found.append(p)
        return found

    def why_not(self, stream: str) -> str:
        """Why none of the subject's policies on ``stream`` authorizes it here: their reasons."""
        mine = {p.name for p in self.policies if stream in p.stream_names}
        if not mine:
            return "you have no policy on it"
        reasons = [f"{s['policy']!r}: {s['reason']}" for s in self.skipped if s["policy"] in mine]
        return "; ".join(dict.fromkeys(reasons)) or (
            "your policies on it grant other operators than the diagram's (read, join, aggregate)"
        )

    def skip(self, policies: Sequence[Policy], why: str) -> None:
        self.skipped.extend({"policy": p.name, "reason": why} for p in policies)

    # second pass: merge, push down the flow, or apply

    def route(self, origin: str, cond: Cond, operator: str) -> None:
        """Push ``cond`` (true of ``origin``'s allowed output) to the secure join or aggregate
        each of ``origin``'s readers leads to, or apply it on that reader's edge."""
        for reader in dict.fromkeys(self.graph.consumers[origin]):
            feeder, target = origin, reader
            while (
                isinstance(self.graph.boxes[target], (FilterBox, MapBox))
                and len(self.graph.consumers[target]) == 1
            ):
                feeder, target = target, self.graph.consumers[target][0]
            upstream = self.graph.boxes[target].upstream
            if target in self.absorbing and upstream.count(feeder) == 1:
                try:
                    self.render(cond, feeder)
                    self.pushed[(target, upstream.index(feeder))] = cond
                    continue
                except Unbound:
                    pass
            self.apply(origin, reader, cond, operator)

    def apply(self, origin: str, reader: str, cond: Cond, operator: str) -> None:
        where = self.render(cond, origin)
        name, new = self.edits.filter_after(origin, where)
        if new:
            self.added.append(
                {
                    "operator": operator,
                    "type": "filter",
                    "box": name,
                    "after": origin,
                    "where": where,
                    "policies": _names(cond),
                }  # fmt: skip
            )
        box = self.graph.boxes[reader]
        if operator == "secure read" and isinstance(box, (MapBox, AggregateBox)):
            schema = self.plan.input_schemas[origin]
            keep = self.graph.used[origin] | {schema.event_time}
            fields = [f for f in schema.names if f in keep]
            if len(fields) < len(schema.names):
                name, new = self.edits.projection_after(origin, name, fields)
                if new:
                    self.added.append(
                        {
                            "operator": "projection",
                            "type": "map",
                            "box": name,
                            "after": origin,
                            "fields": fields,
                        }  # fmt: skip
                    )
        self.edits.redirect(reader, origin, name)

    def secure_join(self, box: JoinBox, policies: list[Policy]) -> None:
        own: Cond = _any(policies)
        left, right = self.pushed.get((box.name, 0)), self.pushed.get((box.name, 1))
        cond = own
        if left and right:
            merged: Cond = ("or", (("and", (left, right)), own))
            try:
                self.render(merged, box.name)
                cond = merged
            except Unbound:
                pass  # the join's policies alone: fewer tuples, never more
        widest = max(p.window.size for p in policies)
        if widest > box.within:
            self.edits.set_param(box.name, "within", _duration(widest))
            self.added.append(
                {
                    "operator": "secure join",
                    "box": box.name,
                    "policies": _names(own),
                    "within": {"from": _duration(box.within), "to": _duration(widest)},
                }  # fmt: skip
            )
        self.route(box.name, cond, "secure join")

    def secure_aggregate(self, box: AggregateBox, policies: list[Policy]) -> None:
        own: Cond = _any(policies)
        pushed = self.pushed.get((box.name, 0))
        cond: Cond = ("or", (pushed, own)) if pushed else own
        where = self.render(cond, box.source)
        name, _ = self.edits.filter_after(box.source, where, f"{box.name}_secure")
        self.edits.redirect(box.name, box.source, name)
        self.added.append(
            {
                "operator": "secure aggregate",
                "type": "filter",
                "box": name,
                "after": box.source,
                "where": where,
                "policies": _names(cond),
            }  # fmt: skip
        )
        size = max([box.size, *(p.window.size for p in policies)])
        slide = max([box.slide, *(p.window.step for p in policies)])
        size = max(size, slide)  # a window may not step farther than it is long
        if (size, slide) != (box.size, box.slide):
            self.edits.set_param(
                box.name, "window", {"size": _duration(size), "slide": _duration(slide)}
            )
            self.added.append(
                {
                    "operator": "secure aggregate",
                    "box": box.name,
                    "policies": _names(own),
                    "window": {
                        "from": {"size": _duration(box.size), "slide": _duration(box.slide)},
                        "to": {"size": _duration(size), "slide": _duration(slide)},
                    },
                }  # fmt: skip
            )

    # conditions as text at a point of the plan

    def render(self, cond: Cond, point: str) -> str:
        """``cond`` as a predicate over ``point``'s output; Unbound if it cannot be one.

        Each policy's predicate is checked at the point; an AND or OR of checked predicates
        is a predicate, so it is not parsed again.
        """
        kind, value = cond
        if kind != "policy":
            return f" {kind.upper()} ".join(f"({self.render(c, point)})" for c in value)
        key = (value, point)
        if key not in self.rendered:
            try:
                text = self._policy_text(value, point)
                check_predicate(text, self.graph.boxes[point].schema, "policy")
                self.rendered[key] = text
            except Unbound as why:
                self.rendered[key] = why
            except DiagramInvalid as err:
                self.rendered[key] = Unbound("; ".join(p.message for p in err.problems))
        found = self.rendered[key]
        if isinstance(found, Unbound):
            raise found
        return found

    def _policy_text(self, p: Policy, point: str) -> str:
        text = p.condition(lambda stream: self.plan.input_schemas[stream].event_time)
        return bind(text, p.stream_names, self.subject.attributes, self.graph.resolver(point))


class _Edits:
    """Changes to the document copy: boxes inserted on edges, parameters changed."""

    def __init__(self, doc: dict[str, Any], plan: Plan) -> None:
        self.doc = doc
        self.boxes = doc.setdefault("boxes", {})
        self.names = set(plan.inputs) | set(self.boxes) | set(doc.get("outputs", {}))
        self.made: dict[tuple[str, str], str] = {}

    def fresh(self, base: str) -> str:
        name, i = base, 1
        while name in self.names:
            i += 1
            name = f"{base}{i}"
        self.names.add(name)
        return name

    def filter_after(self, origin: str, where: str, base: str | None = None) -> tuple[str, bool]:
        key = (origin, where)
        if key in self.made:
            return self.made[key], False
        name = self.made[key] = self.fresh(base or f"{origin}_secure")
        self.boxes[name] = {"type": "filter", "in": origin, "where": where}
        return name, True

    def projection_after(self, origin: str, after: str, fields: list[str]) -> tuple[str, bool]:
        """A map keeping ``fields`` of input ``origin``, reading box ``after``."""
        key = (origin, "")
        if key in self.made:
            return self.made[key], False
        name = self.made[key] = self.fresh(f"{origin}_granted")
        self.boxes[name] = {"type": "map", "in": after, "fields": {f: f for f in fields}}
        return name, True

    def redirect(self, reader: str, old: str, new: str) -> None:
        """Make ``reader`` read ``new`` wherever it read ``old``."""
        if reader in self.doc.get("outputs", {}):
            spec, params = self.doc["outputs"][reader], registry.get("output").params
        else:
            spec = self.boxes[reader]
            params = registry.get(spec["type"]).params
        for param in params:
            value = spec.get(param.name)
            if param.kind is Kind.INPUT_REF and value == old:
                spec[param.name] = new
            elif param.kind is Kind.INPUT_REFS and isinstance(value, list):
                spec[param.name] = [new if v == old else v for v in value]

    def set_param(self, box: str, key: str, value: Any) -> None:
        self.boxes[box][key] = value


def _any(policies: Sequence[Policy]) -> Cond:
    conds = tuple(("policy", p) for p in policies)
    return conds[0] if len(conds) == 1 else ("or", conds)


def _names(cond: Cond) -> list[str]:
    kind, value = cond
    if kind == "policy":
        return [value.name]
    return list(dict.fromkeys(n for c in value for n in _names(c)))


def _duration(seconds: float) -> str:
    millis = round(seconds * 1000)
    return f"{millis // 1000}s" if millis % 1000 == 0 else f"{millis}ms"


def _copy(value: Any) -> Any:
    """A deep copy of the document's mappings and lists (it came from YAML or JSON)."""
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
