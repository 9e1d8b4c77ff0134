"""A diagram document to CQL: every diagram of the five box types has a CQL form.

Each output is one query over a chain the compiler makes: an input or a join (its sides
inputs or views; a join of count windows takes each side through at most one filter, printed
in WHERE with the side's alias), then at most a WHERE filter (not before a count window, whose
WHERE is the aggregate's ``where``), then an aggregate (with at most a HAVING filter after it)
or a map; or a union of such chains. Any other box a chain reaches (a union feeding an
aggregate, a filter before a count window, a box feeding two others, a join of joins) is
printed as ``CREATE VIEW box AS ...``, before the queries that read it by its name in FROM.
Expressions are printed as the document writes them. A view keeps its box's name; other box
names are not printed: compiling the CQL again names the boxes after their clause, so a
diagram whose boxes carry those names comes back equal (``tests/boxes/cql/test_roundtrip.py``),
and any other comes back equal up to box names. What is still refused (CQL_NOT_EXPRESSIBLE)
is an ``on_result`` policy Figure 7's syntax cannot say.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from boxes import codes
from boxes.cql.compiler import DEFAULT_OUTPUT
from boxes.errors import DiagramInvalid, Problem
from boxes.expressions.parser import parse as parse_expression
from boxes.output import WEAK


def to_cql(doc: Mapping[str, Any]) -> str:
    """The CQL script of a (valid) diagram document."""
    return _Printer(doc).run()


def _refuse(path: str, reason: str) -> DiagramInvalid:
    return DiagramInvalid(
        [Problem(codes.CQL_NOT_EXPRESSIBLE, path, codes.CQL_NOT_EXPRESSIBLE.render(reason=reason))]
    )


class _Printer:
    def __init__(self, doc: Mapping[str, Any]) -> None:
        self.doc = doc
        self.boxes: Mapping[str, Any] = doc.get("boxes") or {}
        self.inputs: Mapping[str, Any] = doc.get("inputs") or {}
        self.uses: Counter[str] = Counter()
        for box in self.boxes.values():
            for key in ("in", "left", "right"):
                refs = box.get(key)
                self.uses.update(refs if isinstance(refs, list) else [refs] if refs else [])
        for out in (doc.get("outputs") or {}).values():
            self.uses[out.get("from")] += 1
        self.views: dict[str, str] = {}  # box -> its CREATE VIEW, dependencies first

    def run(self) -> str:
        level = self.doc.get("level")
        at = f"\nAT LEVEL [{', '.join(f'{c}: {v}' for c, v in level.items())}]" if level else ""
        queries = []
        for name, out in (self.doc.get("outputs") or {}).items():
            policy = _on_result(name, out.get("on_result") or ())
            semantic = "\nSEMANTIC WEAK" if out.get("semantic") == WEAK else ""
            query = self.top(out["from"]) + policy + at + semantic
            queries.append(query if name == DEFAULT_OUTPUT else f"INSERT INTO {name}\n{query}")
        parts = [f"CREATE DIAGRAM {self.doc['name']}"]
        parts += [self.stream(n, spec) for n, spec in self.inputs.items() if self.schema(spec)]
        return ";\n".join(parts + list(self.views.values()) + queries) + ";\n"

    def schema(self, spec: Any) -> Mapping[str, Any] | None:
        schema = (spec or {}).get("schema")
        if isinstance(schema, str):
            return (self.doc.get("schemas") or {}).get(schema)
        return schema

    def stream(self, name: str, spec: Mapping[str, Any]) -> str:
        schema = self.schema(spec) or {}
        columns = ", ".join(f"{f} {t}" for f, t in schema.get("fields", {}).items())
        text = f"CREATE STREAM {name} ({columns})"
        if schema.get("event_time"):
            text += f" EVENT TIME {schema['event_time']}"
        if spec.get("lateness"):
            text += f" LATENESS {spec['lateness']}"
        return text

    def shared(self, node: str) -> bool:
        """A box read by two or more: printed once, as a view, and read by its name."""
        return node in self.boxes and self.uses[node] > 1

    def folds(self, node: str, kind: str) -> bool:
        """Whether box ``node``, of type ``kind``, is printed inside the SELECT that reads it."""
        box = self.boxes.get(node)
        return box is not None and box["type"] == kind and not self.shared(node)

    def view(self, node: str) -> str:
        """``node``'s name in FROM: an input's stream, else the view printed for the box."""
        if node not in self.boxes:
            return self.read(node)
        if node not in self.views:
            self.views[node] = f"CREATE VIEW {node} AS\n{self.query(node)}"
        return node

    def top(self, node: str) -> str:
        """The query of an output that reads ``node``."""
        return f"SELECT *\nFROM {self.view(node)}" if self.shared(node) else self.query(node)

    def query(self, node: str) -> str:
        """The SELECTs that compute box (or input) ``node`` itself; a union's branch that is
        shared or a union (CQL's UNION is one level deep) is read from its view."""
        box = self.boxes.get(node)
        if box is None or box["type"] != "union":
            return self.select(node)
        return "\nUNION\n".join(
            f"SELECT *\nFROM {self.view(b)}"
            if self.shared(b) or self.folds(b, "union")
            else self.select(b)
            for b in box["in"]
        )

    def select(self, root: str) -> str:
        """One SELECT computing ``root``, with the boxes below it that fold into its clauses."""
        node, box, having, agg, items = root, self.boxes.get(root), None, None, "*"
        if box and box["type"] == "filter" and self.folds(box["in"], "aggregate"):
            having, node = box["where"], box["in"]
            box = self.boxes[node]
        if box and box["type"] == "aggregate":
            agg, node = box, box["in"]
            group = list(box.get("group_by") or [])
            items = ", ".join(group + [f"{t} AS {n}" for n, t in box["aggregates"].items()])
        elif box and box["type"] == "map":
            node = box["in"]
            items = ", ".join(t if t == n else f"{t} AS {n}" for n, t in box["fields"].items())
        where = agg.get("where") if agg is not None else None
        # A filter below a count window is a view: CQL's WHERE there filters the window's
        # tuples (the aggregate's own ``where``).
        counted = agg is not None and "rows" in agg["window"]
        if self.mine(root, node, "filter") and not counted:
            where, node = self.boxes[node]["where"], self.boxes[node]["in"]
        box = self.boxes.get(node) or {}
        if self.mine(root, node, "join") and "rows" in box and agg is None:
            source, terms = self.count_join(box)
            # In parentheses, an OR in a term stays in it; the compiler splits only on AND.
            where = " AND ".join(terms + ([f"({where})"] if where is not None else []))
        elif self.mine(root, node, "join") and agg is None:
            on = " AND ".join(f"a.{f} = b.{f}" for f in box["on"])
            within = box["within"]
            source = (
                f"{self.view(box['left'])} AS a [RANGE {within}] JOIN "
                f"{self.view(box['right'])} AS b [RANGE {within}]\nON {on}"
            )
        else:
            source = self.view(node) + (f" {_window(agg)}" if agg else "")
        text = f"SELECT {items}\nFROM {source}"
        if where is not None:
            text += f"\nWHERE {where}"
        if agg is not None and agg.get("group_by"):
            text += f"\nGROUP BY {', '.join(agg['group_by'])}"
        if having is not None:
            text += f"\nHAVING {having}"
        return text

    def mine(self, root: str, node: str, kind: str) -> bool:
        """Whether ``node`` is printed in ``root``'s SELECT: the root itself (even a shared
        one: its view is being printed), or a box below that folds."""
        box = self.boxes.get(node)
        if node == root:
            return box is not None and box["type"] == kind
        return self.folds(node, kind)

    def read(self, node: str) -> str:
        """What ``FROM`` names for an input: its stream, or the output a derived input reads."""
        return self.inputs[node].get("output", node)

    def count_join(self, box: Mapping[str, Any]) -> tuple[str, list[str]]:
        """``l AS a [ROWS n], r AS b [ROWS m]`` and the WHERE terms the compiler takes apart
        again: each side's filter with the side's alias, then the keys."""
        sources, terms = [], []
        for side, alias in (("left", "a"), ("right", "b")):
            name = box[side]
            if self.folds(name, "filter"):
                terms.append(f"({_qualified(self.boxes[name]['where'], alias)})")
                name = self.boxes[name]["in"]
            sources.append(f"{self.view(name)} AS {alias} [ROWS {box['rows'][side]}]")
        terms += [f"a.{f} = b.{f}" for f in box["on"]]
        return ", ".join(sources), terms


def _window(agg: Mapping[str, Any]) -> str:
    window = agg["window"]
    slide = f" SLIDE {window['slide']}" if window.get("slide") is not None else ""
    if "size" in window:
        return f"[RANGE {window['size']}{slide}]"
    if agg.get("group_by") and window.get("partitioned", True):
        return f"[PARTITION BY {', '.join(agg['group_by'])} ROWS {window['rows']}{slide}]"
    return f"[ROWS {window['rows']}{slide}]"


def _qualified(text: str, alias: str) -> str:
    """A filter's expression with each field it names written ``alias.field``."""
    tree, problems = parse_expression(text, "where")
    assert tree is not None, problems  # the document was validated
    starts = sorted(ref.meta.start_pos for ref in tree.iter_subtrees() if ref.data == "ref")
    out, last = [], 0
    for start in starts:
        out.append(text[last:start] + f"{alias}.")
        last = start
    return "".join(out) + text[last:]


def _on_result(output: str, sps: Sequence[Mapping[str, Any]]) -> str:
    """An output's ``on_result`` as ``ON RESULT (INSERT SP ...)``: one role per sp, a tuple
    range or all, attribute names or all (what Figure 7's syntax can say)."""
    if not sps:
        return ""
    path = f"outputs.{output}.on_result"
    return (
        "\nON RESULT (" + ", ".join(_insert_sp(sp, f"{path}.{i}") for i, sp in enumerate(sps)) + ")"
    )


def _insert_sp(sp: Mapping[str, Any], path: str) -> str:
    ddp, role = sp.get("ddp") or {}, sp.get("srp")
    if not isinstance(role, str) or role == "*":
        raise _refuse(path, "an ON RESULT sp in CQL names one role")
    parts = [_tuples(ddp.get("tuples", "*"), path), _attributes(ddp.get("attributes", "*"), path)]
    grant = " WITH GRANT OPTION" if sp.get("grant") else ""
    assignments = [f"DDP = {' AND '.join(parts)}", f"SRP = frbac:{role}{grant}"]
    assignments.append("SIGN = " + ("NEGATIVE" if sp.get("sign") == "-" else "POSITIVE"))
    if sp.get("immutable"):
        assignments.append("IMMUTABLE = TRUE")
    return "INSERT SP INTO STREAM LET " + ", ".join(assignments)


def _tuples(pattern: Any, path: str) -> str:
    if pattern == "*":
        return "TUPLES:ALL"
    bounds = pattern.get("inclusive") if isinstance(pattern, Mapping) else None
    if not (isinstance(bounds, list) and all(isinstance(b, int) for b in bounds)):
        raise _refuse(path, "an ON RESULT sp's tuples in CQL are ALL or [low, high]")
    return f"TUPLES:[{bounds[0]}, {bounds[1]}]"


def _attributes(pattern: Any, path: str) -> str:
    if pattern == "*":
        return "ATTRIBUTES:ALL"
    names = [pattern] if isinstance(pattern, str) else pattern
    if not (isinstance(names, list) and names and all(isinstance(n, str) for n in names)):
        raise _refuse(path, "an ON RESULT sp's attributes in CQL are ALL or field names")
    return "ATTRIBUTES:" + (names[0] if len(names) == 1 else f"({', '.join(names)})")
