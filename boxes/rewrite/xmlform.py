"""Policies from the ASSIST paper's XML System Authorization Catalog (seed 002, Appendix B).

The XML is untrusted: it is parsed by defusedxml, which refuses DTDs, entity declarations
and external references, so nothing expands (no "billion laughs", no file reads).

The paper's predicates call C# methods (``IsWithinPortBound``, ``DistanceFromSelf``...);
here each method name maps to an expression template whose ``{0}``, ``{1}``... are the
method's arguments, given by the caller (the administrator importing the catalog), e.g.
``{"BelongsToCompany": "{0} IN (self.ships)"}``. An unknown method, element or literal type
is refused. A time constraint ``<gtc start="Emergency.start" .../>`` reads the subject's
attribute of that name with ``.`` written ``_`` (``self.Emergency_start``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException, DTDForbidden
from defusedxml.ElementTree import fromstring

from boxes import codes
from boxes.errors import InvalidInput
from boxes.limits import nests_too_deep, too_deep
from boxes.rewrite.policy import Policy, invalid, policies_from
from boxes.rewrite.predicates import Unbound, literal

MAX_BYTES = 1 << 20
_PLACEHOLDER = re.compile(r"\{(\d{1,3})\}")
_OPERATORS = {
    "equals": "=",
    "notequals": "<>",
    "lessthan": "<",
    "less_than": "<",
    "lessthanorequal": "<=",
    "greaterthan": ">",
    "greater_than": ">",
    "greaterthanorequal": ">=",
}
_LOGIC = {"bool_and": "AND", "bool_or": "OR"}
_LITERALS: dict[str, Callable[[str], Any]] = {
    "system.string": str,
    "string": str,
    "system.int64": int,
    "system.int32": int,
    "int": int,
    "long": int,
    "system.double": float,
    "double": float,
    "system.boolean": lambda v: {"true": True, "false": False}[v.lower()],
    "bool": lambda v: {"true": True, "false": False}[v.lower()],
}
_UNITS = {"milliseconds": "ms", "seconds": "s", "minutes": "m", "hours": "h", "days": "d"}


def load_xml_policies(text: str | bytes, methods: Mapping[str, str]) -> list[Policy]:
    """The policies of every ``<role>``, named ``ROLE#N`` (N counts from 1 within a role)."""
    return policies_from(xml_items(text, methods))


def xml_items(text: str | bytes, methods: Mapping[str, str]) -> list[dict[str, Any]]:
    """The policies' items (the YAML form, unchecked) of the XML catalog."""
    if len(text) > MAX_BYTES:
        raise invalid("document", f"the XML has {len(text)} bytes; at most {MAX_BYTES}")
    try:
        root = fromstring(text, forbid_dtd=True)
    except ParseError as err:
        raise invalid("document", f"not well-formed XML: {err}") from None
    except DTDForbidden:
        raise invalid("document", "a document type declaration (<!DOCTYPE>) is refused") from None
    except DefusedXmlException:
        raise invalid("document", "entities and external references are refused") from None
    if nests_too_deep(root, list):  # predicate_text recurses over the elements
        raise InvalidInput(too_deep("the policy XML"), code=codes.TOO_DEEP)
    items: list[dict[str, Any]] = []
    for role in root.findall("role"):
        role_name = role.get("name")
        if not role_name:
            raise invalid("document", "every <role> has a name")
        for n, element in enumerate(role.findall("policy"), 1):
            name = f"{role_name}#{n}"
            try:
                items.append(_policy(name, role_name, element, methods))
            except (KeyError, ValueError, IndexError, Unbound) as err:
                if isinstance(err, InvalidInput):
                    raise
                raise invalid(name, f"cannot read the policy: {err}") from None
    return items


def _policy(name: str, role: str, element: Element, methods: Mapping[str, str]) -> dict:
    streams: dict[str, Any] = {}
    for s in element.findall("inputstream"):
        attrs = s.get("attributes", "*").strip()
        streams[s.get("name", "")] = "*" if attrs == "*" else [a.strip() for a in attrs.split(",")]
    item: dict[str, Any] = {"name": name, "role": role, "streams": streams}
    predicate = element.find("predicate")
    if predicate is not None:
        if len(predicate) != 1:
            raise invalid(name, "a <predicate> holds one expression")
        item["where"] = predicate_text(name, predicate[0], methods)
    privilege = element.find("privilege")
    if privilege is None:
        raise invalid(name, "a policy has a <privilege>")
    item["privilege"] = privilege.get("value")
    wtc = privilege.find("wtc")
    if wtc is not None:
        unit = _UNITS.get(wtc.get("units", "seconds"))
        if unit is None:
            raise invalid(name, f"unknown <wtc> units {wtc.get('units')!r}")
        item["window"] = {
            key: f"{wtc.get(attr, '0')}{unit}"
            for key, attr in (("size", "minsize"), ("step", "minhop"))
        }
    gtc = element.find("gtc")
    if gtc is not None and (gtc.get("start") or gtc.get("end")):
        item["during"] = {k: "self." + gtc.get(k, "").replace(".", "_") for k in ("start", "end")}
    return item


def predicate_text(name: str, e: Element, methods: Mapping[str, str]) -> str:
    """The expression text of the predicate element ``e`` (of policy or query ``name``); the
    XML query form (``xmlquery.py``) reads its predicates with it too."""
    tag = e.tag.lower()
    args = [predicate_text(name, child, methods) for child in e]
    if tag == "attribute":
        return f"{e.get('inputstream')}.{e.get('name')}"
    if tag == "litteral" or tag == "literal":
        convert = _LITERALS.get((e.get("type") or "").lower())
        if convert is None:
            raise invalid(name, f"unknown literal type {e.get('type')!r}")
        return literal(convert(e.get("value", "")))
    if tag in _OPERATORS and len(args) == 2:
        return f"({args[0]}) {_OPERATORS[tag]} ({args[1]})"
    if tag in _LOGIC and len(args) >= 2:
        return f" {_LOGIC[tag]} ".join(f"({a})" for a in args)
    if tag == "bool_not" and len(args) == 1:
        return f"NOT ({args[0]})"
    if tag == "method":
        template = methods.get(e.get("name", ""))
        if template is None:
            raise invalid(name, f"no expression is given for method {e.get('name')!r}")
        # Only {N} is replaced: str.format would let a template reach the arguments'
        # attributes ({0.__class__...}), and templates come over the API.
        return "(" + _PLACEHOLDER.sub(lambda m: f"({args[int(m.group(1))]})", template) + ")"
    raise invalid(name, f"unknown element <{e.tag}> with {len(args)} operand(s)")
