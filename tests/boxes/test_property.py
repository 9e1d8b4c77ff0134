"""Property: every output tuple's label is exactly the set of input streams that contributed to it.

Hypothesis draws small random diagrams over one schema {t, k, v} from every box type (an
aggregate or a join is followed by a map back to that schema, so any box can follow any
other) and small random inputs. Spark runs the compiled plan; an independent evaluator in
plain Python computes each output as a multiset of (t, k, v, sources). They must be equal.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from functools import reduce

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F

from boxes.compiler import compile_plan
from boxes.document import validate
from tests.boxes.conftest import T0, at, collect, frames

# (where text, the same predicate in Python)
PREDICATES = [
    ("v > 0", lambda r: r["v"] > 0),
    ("k = 'a'", lambda r: r["k"] == "a"),
    ("v <> 1 and k <> 'b'", lambda r: r["v"] != 1 and r["k"] != "b"),
]


@dataclass
class Node:
    name: str
    kind: str
    sources: list[str] = field(default_factory=list)
    arg: object = None


rows = st.lists(
    st.fixed_dictionaries(
        {"t": st.integers(0, 29), "k": st.sampled_from("ab"), "v": st.integers(-3, 3)}
    ),
    max_size=4,
)


@st.composite
def diagrams(draw):
    nodes = [Node(f"i{j}", "input") for j in range(draw(st.integers(1, 3)))]
    data = {n.name: draw(rows) for n in nodes}
    for b in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["filter", "map", "union", "aggregate", "join"]))
        pick = [
            draw(st.sampled_from(nodes)).name for _ in range(2 if kind in ("union", "join") else 1)
        ]
        if kind == "union" and pick[0] == pick[1]:
            kind, pick = "filter", pick[:1]
        arg = {
            "filter": lambda: draw(st.integers(0, len(PREDICATES) - 1)),
            "map": lambda: draw(st.integers(-2, 2)),
            "union": lambda: None,
            "aggregate": lambda: draw(st.sampled_from([5, 10])),
            "join": lambda: draw(st.sampled_from([0, 3])),
        }[kind]()
        nodes.append(Node(f"b{b}", kind, pick, arg))
    return nodes, data


def document(nodes: list[Node]) -> dict:
    """The diagram; every node nothing reads becomes an output, so nothing is unreachable."""
    schema = {"fields": {"t": "timestamp", "k": "string", "v": "long"}, "event_time": "t"}
    boxes: dict[str, dict] = {}
    for n in nodes:
        src = n.sources[0] if n.sources else None
        if n.kind == "filter":
            boxes[n.name] = {"type": "filter", "in": src, "where": PREDICATES[n.arg][0]}
        elif n.kind == "map":
            boxes[n.name] = {
                "type": "map",
                "in": src,
                "fields": {"t": "t", "k": "k", "v": f"v + {n.arg}"},
            }
        elif n.kind == "union":
            boxes[n.name] = {"type": "union", "in": n.sources}
        elif n.kind == "aggregate":
            boxes[f"{n.name}_agg"] = {
                "type": "aggregate",
                "in": src,
                "window": {"size": f"{n.arg}s"},
                "group_by": ["k"],
                "aggregates": {"s": "sum(v)", "n": "count()"},
            }
            boxes[n.name] = {
                "type": "map",
                "in": f"{n.name}_agg",
                "fields": {"t": "window_end", "k": "k", "v": "s * 10 + n"},
            }
        elif n.kind == "join":
            boxes[f"{n.name}_join"] = {
                "type": "join",
                "left": src,
                "right": n.sources[1],
                "on": ["k"],
                "within": f"{n.arg}s",
            }
            boxes[n.name] = {
                "type": "map",
                "in": f"{n.name}_join",
                "fields": {"t": "left_t", "k": "k", "v": "left_v * 10 + right_v"},
            }
    read = {s for n in nodes for s in n.sources}
    return {
        "version": 1,
        "name": "random",
        "schemas": {"s": schema},
        "inputs": {n.name: {"schema": "s"} for n in nodes if n.kind == "input"},
        "boxes": boxes,
        "outputs": {f"out_{n.name}": {"from": n.name} for n in nodes if n.name not in read},
    }


def reference(nodes: list[Node], data: dict) -> dict[str, list[tuple]]:
    """Each node's tuples as (t seconds, k, v, sources), computed without Spark."""
    out: dict[str, list[tuple]] = {}
    for n in nodes:
        src = out.get(n.sources[0]) if n.sources else None
        if n.kind == "input":
            out[n.name] = [(r["t"], r["k"], r["v"], frozenset([n.name])) for r in data[n.name]]
        elif n.kind == "filter":
            test = PREDICATES[n.arg][1]
            out[n.name] = [r for r in src if test({"t": r[0], "k": r[1], "v": r[2]})]
        elif n.kind == "map":
            out[n.name] = [(t, k, v + n.arg, lab) for t, k, v, lab in src]
        elif n.kind == "union":
            out[n.name] = out[n.sources[0]] + out[n.sources[1]]
        elif n.kind == "aggregate":
            groups: dict[tuple, list] = {}
            for t, k, v, lab in src:
                groups.setdefault((math.floor(t / n.arg) * n.arg + n.arg, k), []).append((v, lab))
            out[n.name] = [
                (
                    end,
                    k,
                    sum(v for v, _ in g) * 10 + len(g),
                    frozenset().union(*(lab for _, lab in g)),
                )
                for (end, k), g in groups.items()
            ]
        elif n.kind == "join":
            right = out[n.sources[1]]
            out[n.name] = [
                (lt, lk, lv * 10 + rv, ll | rl)
                for lt, lk, lv, ll in src
                for rt, rk, rv, rl in right
                if lk == rk and abs(lt - rt) <= n.arg
            ]
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(diagrams())
def test_labels_are_the_contributing_input_streams(spark, diagram):
    nodes, data = diagram
    doc = document(nodes)
    plan = validate(doc)
    outputs = compile_plan(
        plan,
        frames(
            spark,
            plan,
            {name: [{**r, "t": at(r["t"])} for r in rows] for name, rows in data.items()},
        ),
    )
    # One Spark job per example: every output in one union, tagged with its name.
    tagged = [frame.withColumn("_out", F.lit(name)) for name, frame in outputs.items()]
    got = Counter(
        (row.pop("_out"), (row["t"] - T0).total_seconds(), row["k"], row["v"], sources)
        for row, sources in collect(plan, reduce(lambda a, b: a.unionByName(b), tagged))
    )
    expected_by_node = reference(nodes, data)
    expected = Counter(
        (name, float(t), k, v, tuple(sorted(lab)))
        for name, out in doc["outputs"].items()
        for t, k, v, lab in expected_by_node[out["from"]]
    )
    assert got == expected
