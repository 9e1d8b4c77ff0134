"""Rewrite time vs plan size and number of policies (seed 002, Experiments 2 and 3).

``python -m bench.rewrite_time`` prints, per plan (the paper's Q10/Q20/Q30/Q60 sizes: 3, 6,
9 and 18 inputs, each filtered and projected, joined in a chain, counted at the end) and per
number of policies (10-60: one read on every input first, so rewriting succeeds, then random
reads, joins and aggregates), the mean time of ``rewrite`` over 100 runs. It includes checking
the rewritten document into a plan, which a deploy needs anyway.
"""

from __future__ import annotations

import random
import statistics
import time

from boxes.document import validate
from boxes.rewrite import Subject, rewrite
from boxes.rewrite.policy import policies_from
from boxes.types import parse_schema

SCHEMA = parse_schema({"fields": {"t": "timestamp", "k": "string", "v": "long"},
                       "event_time": "t"}, "s")[0]  # fmt: skip
SIZES = {"Q10": 3, "Q20": 6, "Q30": 9, "Q60": 18}


def query(n: int) -> dict:
    boxes: dict = {}
    for i in range(n):
        boxes[f"f{i}"] = {"type": "filter", "in": f"s{i}", "where": "v > 0"}
        boxes[f"p{i}"] = {"type": "map", "in": f"f{i}", "fields": {"t": "t", "k": "k", "v": "v"}}
    last = "p0"
    for i in range(1, n):
        boxes[f"j{i}"] = {"type": "join", "left": last, "right": f"p{i}", "on": ["k"],
                          "within": "10s"}  # fmt: skip
        fields = {"t": "left_t", "k": "left_k", "v": "left_v + right_v"}
        boxes[f"m{i}"] = {"type": "map", "in": f"j{i}", "fields": fields}
        last = f"m{i}"
    boxes["n"] = {"type": "aggregate", "in": last, "window": {"size": "1m"},
                  "aggregates": {"c": "count()"}}  # fmt: skip
    return {"version": 1, "name": "q", "inputs": {f"s{i}": {} for i in range(n)},
            "boxes": boxes, "outputs": {"out": {"from": "n"}}}  # fmt: skip


def policies(n_inputs: int, count: int, rng: random.Random) -> list:
    streams = [f"s{i}" for i in range(n_inputs)]
    items = [{"name": f"base{s}", "role": "r", "streams": {s: "*"}, "where": "v > self.lo",
              "privilege": "read"} for s in streams]  # fmt: skip
    while len(items) < count:
        kind = rng.choices(["read", "join", "count"], [36, 10, 5])[0]
        name = f"p{len(items)}"
        if kind == "join":
            a, b = rng.sample(streams, 2)
            items.append({"name": name, "role": "r", "streams": {a: "*", b: "*"},
                          "where": f"{a}.v < {b}.v", "privilege": "join"})  # fmt: skip
        else:
            items.append({"name": name, "role": "r", "streams": {rng.choice(streams): "*"},
                          "where": "k = self.key", "privilege": kind})  # fmt: skip
    return policies_from(items[:count])


def measure(n_inputs: int, count: int, runs: int = 100) -> float:
    doc = query(n_inputs)
    plan = validate(doc, streams={f"s{i}": SCHEMA for i in range(n_inputs)})
    chosen = policies(n_inputs, max(count, n_inputs), random.Random(count))
    subject = Subject(frozenset({"r"}), {"lo": 0, "key": "a"})
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        rewrite(doc, plan, chosen, subject)
        times.append(time.perf_counter() - start)
    return statistics.mean(times) * 1000


def validation(n_inputs: int, runs: int = 100) -> float:
    """The mean time to validate the query itself, which every deploy pays already."""
    doc, streams = query(n_inputs), {f"s{i}": SCHEMA for i in range(n_inputs)}
    start = time.perf_counter()
    for _ in range(runs):
        validate(doc, streams=streams)
    return (time.perf_counter() - start) / runs * 1000


def main() -> None:
    print("| plan | boxes | policies | rewrite ms (mean of 100) | validate the query ms |")
    print("|---|---|---|---|---|")
    for name, n in SIZES.items():
        boxes = len(query(n)["boxes"]) + n + 1
        checked = validation(n)
        for count in (10, 30, 60):
            row = (
                f"| {name} | {boxes} | {max(count, n)} | {measure(n, count):.2f} | {checked:.2f} |"
            )
            print(row)


if __name__ == "__main__":
    main()
