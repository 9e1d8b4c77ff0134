"""Delivery filter: the SecFilter's cost per tuple per subscriber, as subscribers, roles and
sources grow (the paper's Figure 13 measured 60 ns per tuple for one subscriber).

A batch of 10,000 tuples, most from one source and a tenth from two (the label of a join or
aggregate); each role may read a random half of the sources and each subscriber holds one
role. Timed is ``boxes.secfilter.deliveries`` over the batch for all subscribers: what the
server runs per result batch before it turns the picked rows into messages.

"Roles" here are distinct readable sets among the subscribers (subscriber i holds role
i % roles). Each distinct set needs its own list of rows, so the filter's work must grow with
them; at 500 roles the table also shows the cost of merely copying those lists once
(a floor no filter that hands each set its rows can go below).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from bench.harness import Mode, repeat, timed
from bench.report import Goal, Result, Row
from boxes.labels import LABEL_COLUMN, WORD_BITS, mask_words, word_count
from boxes.secfilter import deliveries, label_array

NAME = "delivery filter"
ROWS = 10_000
GOAL_NS = 5.0
FLAT = 2.0  # "flat in roles": 500 roles cost at most this many times 1 role
MOST_ROLES = 500


def cases(quick: bool) -> list[tuple[int, int, int]]:
    """(subscribers, roles, sources): three sweeps through one middle point."""
    subscribers = (1, 10, 100, 1000) if quick else (1, 10, 100, 300, 1000)
    roles = (1, 10, 100, MOST_ROLES) if quick else (1, 10, 50, 100, 250, MOST_ROLES)
    sources = (2, 64, 200, 4096) if quick else (2, 64, 200, 1024, 4096)
    grid = [(s, 10, 64) for s in subscribers] + [(1000, r, 64) for r in roles]
    grid += [(1000, 10, w) for w in sources]
    return list(dict.fromkeys(grid))


def batch(sources: int, rng: np.random.Generator) -> pa.Table:
    words = word_count(sources)
    first = rng.integers(0, sources, ROWS)
    second = np.where(rng.random(ROWS) < 0.1, rng.integers(0, sources, ROWS), first)
    labels = np.zeros((ROWS, words), dtype=np.uint64)
    for bits in (first, second):
        labels[np.arange(ROWS), bits // WORD_BITS] |= np.left_shift(
            np.uint64(1), (bits % WORD_BITS).astype(np.uint64)
        )
    return pa.table({"x": np.arange(ROWS), LABEL_COLUMN: label_array(list(labels.T))})


def role_masks(sources: int, roles: int, rng: np.random.Generator) -> list[np.ndarray]:
    words = word_count(sources)
    return [
        np.array(mask_words(np.flatnonzero(rng.random(sources) < 0.5), words), dtype=np.int64).view(
            np.uint64
        )
        for _ in range(roles)
    ]


def run(mode: Mode) -> Result:
    rng = np.random.default_rng(7)
    reps = mode.pick(5, 15, least=1)
    result = Result()
    by_case = {}
    for subscribers, roles, sources in cases(mode.quick):
        table = batch(sources, rng)
        masks = role_masks(sources, roles, rng)
        held = [masks[i % roles] for i in range(subscribers)]
        costs = repeat(timed(lambda: deliveries(table, held)), reps, mode.warmup(1))
        ns = float(np.median(costs)) * 1e9 / (ROWS * subscribers)
        by_case[subscribers, roles, sources] = ns
        case = f"subscribers {subscribers}, roles {roles}, sources {sources}"
        result.rows.append(Row(NAME, case, "ns per tuple per subscriber", ns))
        if roles == MOST_ROLES:
            answers = deliveries(table, masks)
            copies = repeat(timed(lambda: [a.copy() for a in answers]), reps, mode.warmup(1))
            result.rows.append(
                Row(
                    NAME,
                    f"{case}: copying the {roles} answers alone",
                    "ns per tuple per subscriber",
                    float(np.median(copies)) * 1e9 / (ROWS * subscribers),
                )
            )
    worst = max(by_case, key=by_case.get)
    result.goals.append(
        Goal(
            NAME,
            f"<= {GOAL_NS:g} ns per tuple per subscriber (every case)",
            f"worst {by_case[worst]:.3g} ns (subscribers {worst[0]}, "
            f"roles {worst[1]}, sources {worst[2]})",
            by_case[worst] <= GOAL_NS,
        )
    )
    role_costs = {r: ns for (s, r, w), ns in by_case.items() if s == 1000 and w == 64}
    growth = role_costs[max(role_costs)] / role_costs[min(role_costs)]
    result.goals.append(
        Goal(
            NAME,
            f"flat in roles: {max(role_costs)} roles <= {FLAT:g}x {min(role_costs)} role",
            f"{growth:.2f}x",
            growth <= FLAT,
        )
    )
    return result
