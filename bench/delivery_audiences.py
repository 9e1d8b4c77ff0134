"""Delivery per audience: what one result batch costs ``Delivery.on_batch`` as subscribers and
their distinct audiences grow (issue 37's goal: at 10,000 subscribers in one audience at most
twice the cost at 10).

A real SQLite catalog: eight input streams, 100 roles each reading a distinct subset of them,
a user and a session per role; subscriber i plays role i % audiences, so the subscribers fall
in exactly that many audiences. A batch of 100 rows (one or two sources each) goes through
``on_batch`` with a recording transport that JSON-encodes each event once, as socket.io
encodes one frame per room, and sends nothing (no network): what is timed is the decision,
the filter, the rows and their encoding, per batch, in the calling thread's CPU time, with
the audiences already decided (the steady state between catalog changes). Each case is timed
interleaved with the 10-subscriber case of the same audiences (as many as its 10 can be: 10
for 100), so the table's ratio is the median of paired ratios with its interquartile range
(``bench.harness.compare``).

    python -m bench.delivery_audiences [--reps 30]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from bench.harness import Work, compare
from bench.report import number
from boxes.secfilter import label_array
from catalog import Action, Catalog, DiagramSpec, ObjectType
from catalog.bootstrap import add_admin
from server.realtime.delivery import Delivery, Labels

PASSWORD = "benchmark password"
SOURCES = 8
ROLES = 100
ROWS = 100
SUBSCRIBERS = (10, 1_000, 10_000)
AUDIENCES = (1, 10, 100)
FLAT = 2.0  # the goal: 10,000 subscribers in one audience cost at most this times 10


class Encoder:
    """A transport that encodes each event once (what socket.io does per room) and keeps
    room membership; it sends nothing."""

    def __init__(self) -> None:
        self.frames = 0
        self.bytes = 0
        self.rooms: dict[str, set[str]] = {}

    def emit(self, event: str, data: dict, to: str) -> None:
        self.frames += 1
        self.bytes += len(json.dumps([event, data]))

    def enter_room(self, sid: str, room: str) -> None:
        self.rooms.setdefault(room, set()).add(sid)

    def leave_room(self, sid: str, room: str) -> None:
        self.rooms.get(room, set()).discard(sid)


def world(cat: Catalog) -> tuple[list, Labels]:
    """Streams, roles with distinct readable sets, a session per role; the output's labels."""
    add_admin(cat, "joe", PASSWORD)
    joe = cat.sessions.login("joe", PASSWORD)[1]
    cat.objects.add_schema(joe, "s", {"fields": {"symbol": "string", "price": "double"}})
    streams = [f"in{i}" for i in range(SOURCES)]
    for stream in streams:
        cat.objects.add_stream(joe, stream, "s")
    cat.objects.add_diagram(joe, DiagramSpec("q", tuple(streams), ("u",), ("out",)))
    sessions = []
    for r in range(ROLES):
        role = f"R{r}"
        cat.accounts.add_role(joe, role)
        for action in (Action.VIEW_OBJECT, Action.SUBSCRIBE):
            cat.grants.grant(joe, role, action, ObjectType.OUTPUT, "out")
        for i, stream in enumerate(streams):
            if (r + 1) >> i & 1:  # role r reads the sources of the bits of r + 1: all distinct
                cat.grants.grant(joe, role, Action.READ_TUPLE, ObjectType.STREAM, stream)
        cat.accounts.add_user(joe, f"u{r}", PASSWORD, [role])
        sessions.append(cat.sessions.login(f"u{r}", PASSWORD)[1])
    snapshot = cat.core.snapshot
    sources = {s: snapshot.find(ObjectType.STREAM, s).source_index for s in streams}
    return sessions, Labels(tuple(streams), sources)


def batch(rng: np.random.Generator) -> pa.Table:
    first = rng.integers(0, SOURCES, ROWS)
    second = np.where(rng.random(ROWS) < 0.3, rng.integers(0, SOURCES, ROWS), first)
    labels = (np.uint64(1) << first.astype(np.uint64)) | (np.uint64(1) << second.astype(np.uint64))
    return pa.table(
        {
            "symbol": [f"S{i % 17}" for i in range(ROWS)],
            "price": rng.random(ROWS) * 100,
            "_label": label_array([labels]),
        }
    )


def cpu_timed(work) -> Work:
    """Work timed in this thread's CPU seconds: on a machine others load, wall time mostly
    measures their turns (``on_batch`` runs on the calling thread alone)."""

    def run() -> float:
        start = time.thread_time()
        work()
        return time.thread_time() - start

    return run


def delivery_of(cat: Catalog, labels: Labels, sessions: list, subscribers: int, audiences: int):
    """A delivery with ``subscribers`` subscriptions of ``out`` in ``audiences`` audiences (as
    many as there are subscribers, if fewer)."""
    transport = Encoder()
    delivery = Delivery(cat, transport)
    delivery.register({"out": None}, labels)
    for i in range(subscribers):
        delivery.subscribe(f"sid{i}", sessions[i % audiences], "out")
    decided = {"audiences": min(audiences, subscribers), "sockets": subscribers}
    assert delivery.audiences("out") == decided
    return delivery, transport


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30, help="timed pairs per case")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(37)
    table = batch(rng)
    lines = [
        "| subscribers | audiences | CPU ms per batch (median) | IQR ms | "
        "x the 10-subscriber case [IQR] | frames per batch |",
        "|---|---|---|---|---|---|",
    ]
    goal = None
    with tempfile.TemporaryDirectory() as tmp:
        cat = Catalog.open(f"sqlite:///{Path(tmp) / 'bench.db'}", bcrypt_rounds=4)
        try:
            sessions, labels = world(cat)
            for audiences in AUDIENCES:
                base, _ = delivery_of(cat, labels, sessions, SUBSCRIBERS[0], audiences)
                for subscribers in SUBSCRIBERS:
                    delivery, sent = delivery_of(cat, labels, sessions, subscribers, audiences)
                    frames = sent.frames
                    delivery.on_batch("out", table)
                    frames = sent.frames - frames
                    run = compare(
                        cpu_timed(lambda d=delivery: d.on_batch("out", table)),
                        cpu_timed(lambda: base.on_batch("out", table)),
                        args.reps,
                        warmup=3,
                    )
                    costs = sorted(run.secured)
                    q1, q3 = costs[len(costs) // 4], costs[(3 * len(costs)) // 4]
                    low, high = run.spread
                    lines.append(
                        f"| {subscribers:,} | {audiences} | {number(run.secured_median * 1e3)} "
                        f"| {number(q1 * 1e3)}–{number(q3 * 1e3)} | {run.ratio:.2f} "
                        f"[{low:.2f}, {high:.2f}] | {frames} |"
                    )
                    if (subscribers, audiences) == (SUBSCRIBERS[-1], 1):
                        goal = run
        finally:
            cat.close()
    print("\n".join(lines))
    assert goal is not None
    low, high = goal.spread
    met = "met" if high <= FLAT else "not met" if low > FLAT else "undecided (spread)"
    print(
        f"\ngoal: 10,000 subscribers in one audience cost <= {FLAT}x 10: "
        f"{goal.ratio:.2f}x [{low:.2f}, {high:.2f}]: {met}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
