"""Seed 003's Figure 13: the Security Shield's cost per tuple, as the ratio of tuples to sps
goes from 1 to 100 and the number of roles from 1 to 500 (``python -m bench --only sp``).

The work is what the ingestion log's writer does per stream (``server/ingest/punctuated.py``)
before it builds the label columns, batch by batch (1 000 tuples and their sps, as a REST or
socket batch of the largest default size brings them): the batch through ``admit_batch``, and
each tuple's label from the compiled policies (``Deciders.labels``: a policy compiled once per
content, so a provider sending its policy again with a new timestamp costs a lookup). The
provider's policies cycle through four contents, each a new timestamp; the case "every policy
new" gives each sp a content never seen (a compile per sp). Absolute costs: there is no
unsecured twin of a shield.

Around the shield, the ingestion log's writer at one sp per tuple: a REST or socket batch of
alternating sps and stamped tuples (items split, checked, labelled, written as one frame and
fsynced: ``IngestLog.append_parts``) against the same tuples on an ungoverned stream, in
interleaved pairs; per sp and tuple.

Then what the labels cost past the shield as the roles grow (``columns``): the writer's policy
columns for frames of 1 000 tuples under four attribute-level policies, and an input's reading
of them into a plan's policy words (two field sets), at 1, 64, 130 and 500 roles: one word of
mask up to 64 roles, three and eight words above (``boxes/punctuations/words.py``).
"""

from __future__ import annotations

import tempfile
from itertools import count

import numpy as np
import pyarrow as pa

from bench.harness import Mode, compare, repeat, timed
from bench.report import Goal, Result, Row, percent
from boxes.punctuations import Deciders, Sp, SpsAt, Stamp, Stamps, admit_batch
from boxes.punctuations import patterns as p
from boxes.punctuations.columns import label_columns, read_policy
from boxes.punctuations.decision import TupleLabel
from boxes.punctuations.shield import EMPTY
from boxes.punctuations.words import width
from boxes.types import parse_schema
from catalog.clearance import PUBLIC_ONLY
from server.ingest import IngestLog, Limits
from server.ingest.items import split
from server.ingest.punctuated import Governance

NAME = "sp shield (Figure 13)"
ROLES = (1, 10, 100, 500)
RATIOS = (1, 10, 100)
FIELDS = ("patient", "bpm", "temperature")
GOAL_NS = 1000.0  # per tuple at one sp per tuple
FLAT = 2.0  # 500 roles at most twice 1 role
COLUMN_ROLES = (1, 64, 130, 500)
FRAME = 1_000


def workload(tuples: int, ratio: int, roles: int, fresh: bool = False):
    """Batches of ``FRAME`` tuples ``(stamps, sps_at)``: one sp, then ``ratio`` tuples under
    it, and again."""
    names = [f"R{i}" for i in range(roles)]
    pool = [
        p.members(*names[:3]),
        p.WILDCARD,
        p.const(names[-1]),
        p.members(*names[::7][:5]),
    ]
    out: list[tuple[list[Stamp], list[tuple[int, list[Sp]]]]] = []
    for i in range(tuples // ratio):
        ts = i + 1
        if fresh:  # a content never seen: a tuple pattern of its own
            sp = Sp(roles=pool[0], tuples=p.inclusive(0, ts), ts=ts, sn=1)
        else:
            sp = Sp(roles=pool[i % len(pool)], ts=ts, sn=1)
        if not out or len(out[-1][0]) + ratio > FRAME:
            out.append(([], []))
        stamps, sps_at = out[-1]
        sps_at.append((len(stamps), [sp]))
        stamps += [Stamp(ts, 1)] * ratio
    batches = [(Stamps.of(stamps), SpsAt.of(sps_at)) for stamps, sps_at in out]
    return {f"R{i}": i for i in range(roles)}, batches


def shield(roles: dict, work: list) -> None:
    state, deciders = EMPTY, Deciders("vitals", FIELDS, roles, "patient")
    for stamps, sps_at in work:
        state, admitted = admit_batch(state, stamps, sps_at)
        deciders.labels(admitted)


def ingestion(result: Result, pairs: int, reps: int) -> None:
    """The writer's cost at one sp per tuple, governed vs the same tuples ungoverned."""
    schema, _ = parse_schema({"fields": {name: "long" for name in FIELDS}}, "vitals")
    governance = Governance(FIELDS, {"DOCTOR": 0, "NURSE": 1}, "patient")
    stamps = count(1)

    def batch() -> list[dict]:
        items: list[dict] = []
        for i, ts in zip(range(pairs), stamps, strict=False):
            ddp = {"streams": "vitals"}
            items.append({"sp": {"ddp": ddp, "srp": ["DOCTOR", "NURSE"][i % 2], "ts": ts, "sn": 1}})
            items.append(
                {"patient": i, "bpm": 70, "temperature": 37, "_stamp": {"ts": ts, "csn": 1}}
            )
        return items

    def tuples() -> list[dict]:
        return [{"patient": i, "bpm": 70, "temperature": 37} for i in range(pairs)]

    with tempfile.TemporaryDirectory() as root:
        log = IngestLog(root, Limits(max_tuples=pairs))
        for name in ("vitals", "plain"):
            log.create_stream(name, schema)
        try:
            secured = timed(
                lambda: log.append_parts(
                    "vitals", split(batch(), "vitals"), PUBLIC_ONLY, governance
                )
            )
            unsecured = timed(lambda: log.append("plain", tuples()))
            comparison = compare(secured, unsecured, reps)
        finally:
            log.close()
    us = comparison.secured_median * 1e6 / pairs
    plain = comparison.unsecured_median * 1e6 / pairs
    case = f"ingestion at 1 tuple per sp, batches of {pairs}: sps and tuples vs tuples alone"
    result.rows.append(
        Row(NAME, case, "us per tuple", us, plain, comparison),
    )
    low, high = comparison.spread
    result.extra["ingestion"] = {
        "secured_us": us,
        "unsecured_us": plain,
        "overhead": f"{percent(comparison.ratio)} [{percent(low)}, {percent(high)}]",
    }


def median_seconds(roles: dict, work: list, reps: int) -> float:
    return float(np.median(repeat(timed(lambda: shield(roles, work)), reps)))


def columns(roles: int, frames: int) -> None:
    """``frames`` frames' policy columns written and read (see the module's docstring)."""
    last = 1 << (roles - 1)
    masks = [last | 1 << i % roles for i in range(4)]  # the heart rate hidden from everyone
    policies = [TupleLabel(m, (m, 0, m)) for m in masks]
    labels = [policies[i * 4 // FRAME] for i in range(FRAME)]
    fields = pa.table({"patient": np.arange(FRAME), "bpm": np.full(FRAME, 70)})
    for _ in range(frames):
        table = fields
        for name, column in label_columns(labels, FIELDS).items():
            table = table.append_column(name, column)
        read_policy(table, [["patient"], ["bpm", "temperature"]], count=width(roles))


def run(mode: Mode) -> Result:
    tuples, reps = mode.tuples(12_000, 60_000, least=1_000), mode.pick(5, 15, least=1)
    result = Result()
    cost: dict[tuple[int, int], float] = {}
    for ratio in RATIOS:
        for roles in ROLES:
            mapping, work = workload(tuples, ratio, roles)
            ns = median_seconds(mapping, work, reps) * 1e9
            cost[ratio, roles] = ns / tuples
            case = f"{ratio} tuples per sp, {roles} roles"
            result.rows.append(Row(NAME, case, "ns per tuple", cost[ratio, roles]))
    ingestion(result, mode.pick(500, 1000, least=50), mode.pick(9, 25, least=1))
    mapping, work = workload(tuples, 1, 500, fresh=True)
    fresh = median_seconds(mapping, work, reps) * 1e9 / tuples
    case = "1 tuple per sp, 500 roles, every policy new"
    result.rows.append(Row(NAME, case, "ns per tuple", fresh))
    frames = mode.pick(10, 50, least=1)
    for roles in COLUMN_ROLES:
        seconds = float(np.median(repeat(timed(lambda r=roles: columns(r, frames)), reps)))
        case = f"policy columns written and read, {roles} roles"
        result.rows.append(Row(NAME, case, "ns per tuple", seconds * 1e9 / (frames * FRAME)))
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
