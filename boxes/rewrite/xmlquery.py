"""The paper's XML query form (seed 002, Appendix A) as a front end: it compiles to a diagram
document, which is then validated, stored and deployed like any other (as CQL is).

``<query>`` lists the operators in order, each naming its input streams and its output stream:
``<inputstream name=STREAM>`` (a source: the catalog stream STREAM), ``<join>`` (its predicate
inside it, or the ``<predicate>`` right after it, as the appendix prints it across a page
break), ``<filter>`` and the sink ``<outputstream name=OUTPUT>``. Attributes are named by the
stream of the operator that reads them (``<attribute name="Next_leg"
inputstream="Join.0.out"/>``); each becomes the field carrying it at that point of the
diagram, found as the rewriter finds a policy's (``graph.py``). Predicates use the policies'
XML elements (``xmlform``), without methods. The XML is parsed as the policies' is: no DTD,
no entities.

Sluice's join joins on equal fields within an event-time bound: a join's predicate must be an
equality (or an AND of them) of one attribute of each side carrying the same field name, and
its bound is its ``within`` attribute (default ``1h``, the paper's one-hour windows). A join's
attribute list names what operators downstream may read of it; the join itself carries all
its inputs' fields, as every Sluice join does. A source's attribute list is its schema as the
paper prints it: the catalog's schema is the one used.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from typing import Any
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from boxes import codes
from boxes.document import validate
from boxes.errors import DiagramInvalid, InvalidInput, Problem
from boxes.limits import nests_too_deep, too_deep
from boxes.rewrite.graph import analyse
from boxes.rewrite.predicates import Unbound, bind
from boxes.rewrite.xmlform import MAX_BYTES, predicate_text
from boxes.types import Schema

DEFAULT_WITHIN = "1h"
_HERE = "__here"  # the stream name an attribute is rewritten to before binding


def query_document(
    text: str | bytes, schemas: Callable[[list[str]], Mapping[str, Schema]], name: str | None
) -> dict:
    """The diagram document of an Appendix A query; ``schemas(names)`` gives those of the
    named catalog streams the submitter may view. Otherwise DiagramInvalid, its problem
    QUERY_XML_INVALID at ``xml.OPERATOR``, as a document's problems are reported."""
    root = _parsed(text)
    query = root if root.tag == "query" else root.find("query")
    if query is None:
        raise _refuse("document", "expected <query> (inside <root> or alone)")
    operators = list(query)
    sources = [e.get("name", "") for e in operators if e.tag.lower() == "inputstream"]
    return _Compiler(schemas(sources), name or "query").run(operators)


class _Compiler:
    def __init__(self, streams: Mapping[str, Schema], name: str) -> None:
        self.streams = streams
        self.doc: dict[str, Any] = {"version": 1, "name": name, "inputs": {}, "boxes": {}}
        self.doc["outputs"] = {}
        self.points: dict[str, str] = {}  # an operator's output stream -> its box (or input)
        # per output stream, its attributes' origins (stream, field); None: a source's, all
        self.origins: dict[str, dict[str, tuple[str, str]] | None] = {}

    def run(self, operators: list[Element]) -> dict:
        for i, e in enumerate(operators):
            tag, label = e.tag.lower(), e.get("name") or f"#{i + 1}"
            if tag == "inputstream":
                self.source(e, label)
            elif tag == "join":
                after = operators[i + 1] if i + 1 < len(operators) else None
                self.join(
                    e, label, after if after is not None and after.tag == "predicate" else None
                )
            elif tag == "predicate":
                if i == 0 or operators[i - 1].tag.lower() != "join":
                    raise _refuse(
                        label, "a <predicate> stands inside its operator or after a <join>"
                    )
            elif tag == "filter":
                self.filter(e, label)
            elif tag == "outputstream":
                self.doc["outputs"][label] = {
                    "from": self.point(label, self.inputs(e, label, 1)[0])
                }
            else:
                raise _refuse(label, f"unknown operator <{e.tag}>")
        if not self.doc["outputs"]:
            raise _refuse("document", "a query has one sink, an <outputstream> naming its input")
        return self.doc

    def source(self, e: Element, label: str) -> None:
        if label not in self.streams:
            raise _refuse(label, "no input stream of this name (that you may view)")
        self.doc["inputs"][label] = {}
        out = self.output(e, label)
        self.points[out], self.origins[out] = label, None

    def join(self, e: Element, label: str, after: Element | None) -> None:
        left, right = self.inputs(e, label, 2)
        inside = e.find("predicate")
        predicate = inside if inside is not None else after
        if predicate is None or len(predicate) != 1:
            raise _refuse(label, "a join has a <predicate> of one expression")
        box = self.box(label)
        on = [self.equal_field(label, c, left, right) for c in _conjuncts(predicate[0])]
        within = e.get("within", DEFAULT_WITHIN)
        self.doc["boxes"][box] = {
            "type": "join",
            "left": self.point(label, left),
            "right": self.point(label, right),
            "on": on,
            "within": within,
        }
        out = self.output(e, label)
        self.points[out] = box
        named: dict[str, tuple[str, str]] = {}  # without a list, nothing downstream reads it
        for a in e.findall("attribute"):
            source = a.find("input")
            if source is None or source.get("inputstream") not in (left, right):
                raise _refuse(label, f"attribute {a.get('name')!r} has no <input> of the join's")
            named[a.get("name", "")] = self.origin(
                label, source.get("inputstream", ""), source.get("name", "")
            )
        self.origins[out] = named

    def filter(self, e: Element, label: str) -> None:
        (source,) = self.inputs(e, label, 1)
        predicate = e.find("predicate")
        if predicate is None or len(predicate) != 1:
            raise _refuse(label, "a filter has a <predicate> of one expression")
        where = self.expression(label, predicate[0], self.point(label, source), {source})
        box = self.box(label)
        self.doc["boxes"][box] = {"type": "filter", "in": self.point(label, source), "where": where}
        out = self.output(e, label)
        self.points[out], self.origins[out] = box, self.origins[source]

    # attributes: from the stream an operator reads to the field carrying them there

    def origin(self, label: str, stream: str, name: str) -> tuple[str, str]:
        if stream not in self.origins:
            raise _refuse(label, f"{stream!r} is no operator's output stream before it")
        known = self.origins[stream]
        if known is None:
            return self.points[stream], name
        if name not in known:
            raise _refuse(label, f"{stream!r} has no attribute {name!r}")
        return known[name]

    def field_at(self, label: str, point: str, origin: tuple[str, str]) -> str:
        """The field carrying ``origin`` at ``point``, from the document so far."""
        every = [*self.doc["inputs"], *self.doc["boxes"]]  # each leads to an output
        probe = {**self.doc, "outputs": {f"{p}_xml_probe": {"from": p} for p in every}}
        try:
            plan = validate(probe, streams=self.streams)
        except DiagramInvalid as err:
            raise _refuse(label, "; ".join(p.message for p in err.problems)) from None
        found = analyse(plan).resolver(point)(*origin)
        if found is None:
            raise _refuse(label, f"{'.'.join(origin)} is not carried by {point!r}")
        return found

    def expression(self, label: str, e: Element, point: str, readable: set[str]) -> str:
        """The predicate ``e`` over ``point``'s fields; its attributes name a stream of
        ``readable``."""
        tree = copy.deepcopy(e)
        for a in tree.iter("attribute"):
            stream = a.get("inputstream", "")
            if stream not in readable:
                raise _refuse(label, f"attribute {a.get('name')!r} of {stream!r}, not of its input")
            field = self.field_at(label, point, self.origin(label, stream, a.get("name", "")))
            a.attrib = {"inputstream": _HERE, "name": field}
        try:
            return bind(predicate_text(label, tree, {}), (_HERE,), {}, lambda _, f: f)
        except InvalidInput as err:
            raise _refuse(label, str(err.params.get("reason", err.message))) from None
        except Unbound as why:
            raise _refuse(label, str(why)) from None

    def equal_field(self, label: str, e: Element, left: str, right: str) -> str:
        """The field an equality of the join's predicate joins on."""
        sides = e.findall("attribute")
        if e.tag.lower() != "equals" or len(e) != 2 or len(sides) != 2:
            raise _refuse(label, "a join's predicate is equalities of an attribute of each side")
        named = {a.get("inputstream"): a.get("name", "") for a in sides}
        if set(named) != {left, right}:
            raise _refuse(label, "each equality compares an attribute of each side")
        fields = {
            self.field_at(label, self.point(label, s), self.origin(label, s, named[s]))
            for s in (left, right)
        }
        if len(fields) != 1:
            raise _refuse(label, "a join joins on one field name on both sides")
        return fields.pop()

    # names

    def inputs(self, e: Element, label: str, count: int) -> list[str]:
        found = [s.get("name", "") for s in e.findall("inputstream")]
        if len(found) != count:
            raise _refuse(label, f"expected {count} <inputstream>; got {len(found)}")
        return found

    def output(self, e: Element, label: str) -> str:
        out = e.find("outputstream")
        if out is None or not out.get("name") or out.get("name") in self.points:
            raise _refuse(label, "every operator names one new <outputstream>")
        return out.get("name", "")

    def point(self, label: str, stream: str) -> str:
        if stream not in self.points:
            raise _refuse(label, f"{stream!r} is no operator's output stream before it")
        return self.points[stream]

    def box(self, label: str) -> str:
        name = re.sub(r"\W", "_", label)
        if name in self.doc["boxes"] or name in self.doc["inputs"]:
            raise _refuse(label, "two operators have this name")
        return name


def _parsed(text: str | bytes) -> Element:
    """The XML's root; no DTD, no entities, at most MAX_BYTES long and ``boxes.limits``' depth."""
    if len(text) > MAX_BYTES:
        raise _refuse("document", f"the XML has {len(text)} bytes; at most {MAX_BYTES}")
    try:
        root = fromstring(text, forbid_dtd=True)
    except (ParseError, DefusedXmlException):
        raise _refuse("document", "not well-formed XML, or XML with a DTD or entities") from None
    if nests_too_deep(root, list):  # predicates are walked recursively
        raise DiagramInvalid([Problem(codes.TOO_DEEP, "xml.document", too_deep("the XML query"))])
    return root


def _conjuncts(e: Element) -> list[Element]:
    return [c for part in e for c in _conjuncts(part)] if e.tag.lower() == "bool_and" else [e]


def _refuse(where: str, reason: str) -> DiagramInvalid:
    """A problem at operator ``where`` (its name), reported as a document's are."""
    return DiagramInvalid([Problem(codes.QUERY_XML_INVALID, f"xml.{where[:64]}", reason)])
