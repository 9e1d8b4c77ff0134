"""Seed 003's Figure 13: the Security Shield's cost per tuple, as the ratio of tuples to sps
goes from 1 to 100 and the number of roles from 1 to 500 (``python -m bench --only sp``).

The work is what the ingestion log's writer does per stream (``server/ingest/punctuated.py``)
before it builds the label columns: each sp through ``admit_sp``, each frame of tuples through
``admit_frame`` (one shield step per run of equal stamps), and each run's labels from the
compiled policy (``Deciders``: compiled once per content, so a provider sending its policy
again with a new timestamp costs a lookup). The provider's policies cycle through four
contents, each a new timestamp; the case "every policy new" gives each sp a content never seen
(a compile per sp). Absolute costs: there is no unsecured twin of a shield.
"""

from __future__ import annotations

import numpy as np

from bench.harness import Mode, repeat, timed
from bench.report import Goal, Result, Row
from boxes.punctuations import Deciders, Sp, Stamp, admit_frame, admit_sp
from boxes.punctuations import patterns as p
from boxes.punctuations.shield import EMPTY

NAME = "sp shield (Figure 13)"
ROLES = (1, 10, 100, 500)
RATIOS = (1, 10, 100)
FIELDS = ("patient", "bpm", "temperature")
GOAL_NS = 1000.0  # per tuple at one sp per tuple
FLAT = 2.0  # 500 roles at most twice 1 role


def workload(tuples: int, ratio: int, roles: int, fresh: bool = False):
    """(sp, stamps of its frame) pairs: one sp, then ``ratio`` tuples under it."""
    names = [f"R{i}" for i in range(roles)]
    pool = [
        p.members(*names[:3]),
        p.WILDCARD,
        p.const(names[-1]),
        p.members(*names[::7][:5]),
    ]
    out = []
    for i in range(tuples // ratio):
        ts = i + 1
        if fresh:  # a content never seen: a tuple pattern of its own
            sp = Sp(roles=pool[0], tuples=p.inclusive(0, ts), ts=ts, sn=1)
        else:
            sp = Sp(roles=pool[i % len(pool)], ts=ts, sn=1)
        out.append((sp, [Stamp(ts, 1)] * ratio))
    return {f"R{i}": i for i in range(roles)}, out


def shield(roles: dict, work: list) -> None:
    state, deciders = EMPTY, Deciders("vitals", FIELDS, roles, "patient")
    for sp, stamps in work:
        state, _ = admit_sp(state, sp)
        state, runs = admit_frame(state, stamps)
        for run in runs:
            deciders(run.policy).frame(run.stop - run.start)


def median_seconds(roles: dict, work: list, reps: int) -> float:
    return float(np.median(repeat(timed(lambda: shield(roles, work)), reps)))


def run(mode: Mode) -> Result:
    tuples, reps = mode.tuples(12_000, 60_000), mode.pick(5, 15)
    result = Result()
    cost: dict[tuple[int, int], float] = {}
    for ratio in RATIOS:
        for roles in ROLES:
            mapping, work = workload(tuples, ratio, roles)
            ns = median_seconds(mapping, work, reps) * 1e9
            cost[ratio, roles] = ns / tuples
            case = f"{ratio} tuples per sp, {roles} roles"
            result.rows.append(Row(NAME, case, "ns per tuple", cost[ratio, roles]))
    mapping, work = workload(tuples, 1, 500, fresh=True)
    fresh = median_seconds(mapping, work, reps) * 1e9 / tuples
    case = "1 tuple per sp, 500 roles, every policy new"
    result.rows.append(Row(NAME, case, "ns per tuple", fresh))
    growth = max(cost[r, ROLES[-1]] / cost[r, ROLES[0]] for r in RATIOS)
    result.goals.append(
        Goal(
            NAME,
            f"flat in roles: {ROLES[-1]} roles <= {FLAT:g}x {ROLES[0]} role (every ratio)",
            f"at most {growth:.2f}x",
            growth <= FLAT,
        )
    )
    worst = max(cost[1, r] for r in ROLES)
    result.goals.append(
        Goal(
            NAME,
            f"<= {GOAL_NS:g} ns per tuple at one sp per tuple",
            f"worst {worst:.0f} ns (policies repeating); {fresh:.0f} ns every policy new",
            worst <= GOAL_NS,
        )
    )
    return result
