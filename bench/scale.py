"""Issue 17's scale goals: many deployed diagrams on one ``sluice serve``, and what each costs.

``python -m bench.scale [--diagrams 10,30] [--identical 100] [--idle-seconds 20]`` (or ``make
bench-scale``) starts the real server in a process of its own (as ``bench.soak`` does), creates
50 input streams, then deploys diagrams one by one through the REST API up to each count: each
a filter or a 10 s windowed average over 1-4 of the streams (a union first when more than
one), drawn by a seeded RNG, so that the first 10 of 30 are the 10 of a run at 10. At each
count: the deploy times of the diagrams just added, the memory of the server's whole process
tree (the Python server, Spark's JVM and every Python process Spark started), its idle CPU
with no tuples arriving, and then a restart (the server stopped and started on the same data
directory) timed until every diagram reports running again. Last, "100 users' identical
diagrams" as ``--identical`` diagrams that differ only in their names, deployed after a
different one that warms the restarted server up, with sharing on, as the server runs by
default: how many of them share one execution (``GET /system/status``), and what they cost
over one diagram. One diagram costs the slope of the workload's memory over the plans its
diagrams run as (with prefixes shared, many of the workload's filters are members of another's
plan, so a slope over diagrams would not be a diagram with a plan of its own); the identical
set is at most one new plan, whose expected cost is that same slope (what the first of them
adds in one run is mostly where the JVM's heap happened to grow), and its members, measured
as the app process's anonymous PSS; the tree's PSS as it moved in the run is reported beside
it. Nothing is
extrapolated silently: the figures for 1,000 diagrams are linear fits through the measured
counts, and say so, as does the 100 users' figure when fewer than 100 identical diagrams were
deployed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.proctree import (
    anon_pss_bytes,
    command,
    parents,
    pss_bytes,
    started,
    tree,
    tree_cpu_seconds,
    tree_pss_bytes,
    tree_rss_bytes,
)
from bench.report import RESULTS, Goal, Row, machine, table, write
from bench.soak import Api, Served

NAME = "scale"
STREAMS = 50
SCHEMA = {
    "name": "s",
    "fields": {"time": "timestamp", "symbol": "string", "price": "double"},
    "event_time": "time",
}
TARGET = 1000  # the diagram count
GOAL_MEMORY_GB, GOAL_DEPLOY_S, GOAL_RESUME_S, GOAL_IDLE_CORES, GOAL_SHARED = 12, 1.0, 300, 0.5, 2
USERS = 100  # the issue's "100 users' identical diagrams"
MIB = 2**20


def kind(cmd: str) -> str:
    """Which part of the server a process of its tree is."""
    if "pyspark.daemon" in cmd:
        return "Spark's Python workers"
    if cmd.split(" ", 1)[0].endswith("java"):
        return "JVM"
    return "server (gunicorn)"


def stream_names(count: int = STREAMS) -> list[str]:
    return [f"feed{i}" for i in range(count)]


def document(name: str, inputs: list[str], kind: str, threshold: int) -> dict:
    """A filter (``price >= threshold``) or a 10 s windowed average per symbol over ``inputs``,
    with one output ``<name>_out``."""
    boxes: dict[str, dict] = {}
    source = inputs[0]
    if len(inputs) > 1:
        boxes["merged"] = {"type": "union", "in": inputs}
        source = "merged"
    if kind == "filter":
        boxes["kept"] = {"type": "filter", "in": source, "where": f"price >= {threshold}"}
    else:
        boxes["kept"] = {
            "type": "aggregate",
            "in": source,
            "window": {"size": "10s"},
            "group_by": ["symbol"],
            "aggregates": {"avg_price": "avg(price)"},
        }
    return {
        "version": 1,
        "name": name,
        "inputs": {i: {} for i in inputs},
        "boxes": boxes,
        "outputs": {f"{name}_out": {"from": "kept"}},
    }


def workload(count: int, seed: int = 17, streams: int = STREAMS) -> list[dict]:
    """``count`` diagrams ``d0``, ``d1``, ...: each a filter or a windowed aggregate over 1-4
    distinct streams. One RNG draws them in order, so a smaller count is a prefix."""
    rng, names = random.Random(seed), stream_names(streams)
    docs = []
    for i in range(count):
        inputs = sorted(rng.sample(names, rng.randint(1, 4)))
        shape = rng.choice(("filter", "aggregate"))
        docs.append(document(f"d{i}", inputs, shape, rng.randint(0, 100)))
    return docs


def identical(count: int) -> list[dict]:
    """``count`` diagrams the same in inputs, boxes and parameters; only their names differ."""
    return [document(f"same{i}", ["feed0", "feed1"], "filter", 50) for i in range(count)]


def slope(points: dict[int, float]) -> float:
    """Least-squares slope of value over count."""
    xs, ys = list(points), list(points.values())
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else 0.0


def at(points: dict[int, float], count: int) -> float:
    """The least-squares line through ``points``, read at ``count`` (an extrapolation)."""
    b = slope(points)
    return statistics.fmean(points.values()) - b * statistics.fmean(points) + b * count


def at_target(points: dict[int, float]) -> tuple[float, str]:
    """The value at ``TARGET`` diagrams: measured if the run deployed that many, else read off
    the fitted line; and which of the two it is."""
    if TARGET in points:
        return points[TARGET], "MEASURED"
    return at(points, TARGET), "EXTRAPOLATED"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class Point:
    """What was measured with ``count`` diagrams deployed."""

    count: int
    deploys: list[float] = field(default_factory=list)  # seconds, the diagrams added last
    creates: list[float] = field(default_factory=list)
    failed: int = 0
    rss: int = 0
    pss: int = 0
    parts: dict[str, list[int]] = field(default_factory=dict)  # kind -> [processes, PSS]
    idle_cores: float = 0.0
    stop_s: float = 0.0
    resume_s: float = 0.0  # process start -> every diagram running
    http_s: float = 0.0  # process start -> HTTP answering (create_app resumes before serving)
    pss_resumed: int = 0
    not_resumed: list[str] = field(default_factory=list)
    shared: int = 0  # the most diagrams deployed here that share one execution
    plans: int = 0  # the Spark plans the diagrams deployed here run as (shared or alone)


class Scale:
    """One server on one data directory, restarted in place; everything it starts is stopped
    by :meth:`close`, however the run ends."""

    def __init__(self, root: Path, start_limit: float) -> None:
        self.root, self.start_limit = root, start_limit
        self.served: Served | None = None
        self.deployed: list[str] = []
        self.start_s = self.start()

    def start(self) -> float:
        began = time.perf_counter()
        self.served = Served(self.root, self.start_limit)
        self.api = Api(self.served.url, self.served.login("joe"))
        return time.perf_counter() - began

    @property
    def pid(self) -> int:
        assert self.served is not None
        return self.served.process.pid

    def stop(self) -> float:
        """Stop the server (SIGTERM: queries stop, checkpoints stay), then kill by id anything
        of its tree still alive (a JVM that outlived its parent must not leak); an id is
        only killed while it still names the process that started then."""
        if self.served is None:
            return 0.0
        began, pids = time.perf_counter(), {p: _started(p) for p in tree(self.pid)}
        try:
            self.served.stop()
        finally:
            self.served = None
            for pid, at_start in pids.items():
                if at_start is not None and _started(pid) == at_start:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
        return time.perf_counter() - began

    close = stop

    def deploy(self, doc: dict, point: Point) -> None:
        began = time.perf_counter()
        self.api.call("POST", "/diagrams", {"document": doc})
        created = time.perf_counter()
        try:
            self.api.call("POST", f"/diagrams/{doc['name']}/deploy")
        except RuntimeError as err:  # counted, not fatal: the issue saw deploys fail under load
            print(f"deploy {doc['name']} failed: {err}", file=sys.stderr, flush=True)
            point.failed += 1
            return
        point.creates.append(created - began)
        point.deploys.append(time.perf_counter() - created)
        self.deployed.append(doc["name"])

    def states(self) -> dict[str, str]:
        found = {}
        for name in self.deployed:
            progress = self.api.call("GET", f"/diagrams/{name}/status").get("progress") or {}
            found[name] = progress.get("state", "none")
        return found

    def restart(self, point: Point, limit: float) -> None:
        """Stop, start on the same data directory, and time until every diagram is running."""
        point.stop_s = self.stop()
        began = time.perf_counter()
        self.start()
        point.http_s = time.perf_counter() - began
        deadline = began + limit
        while True:
            waiting = [n for n, s in self.states().items() if s != "running"]
            if not waiting or time.perf_counter() > deadline:
                break
            time.sleep(0.5)  # poll: a diagram's status has no event to await
        point.resume_s = time.perf_counter() - began
        point.not_resumed = waiting

    def most_sharing(self) -> int:
        """The most diagrams one shared execution serves (``GET /system/status``)."""
        runtime = self.api.call("GET", "/system/status")["runtime"] or {}
        return max((len(group["members"]) for group in runtime.get("shared", [])), default=0)

    def plans(self) -> int:
        """How many plans (each its own Spark queries) the deployed diagrams run as: each
        shared execution once, and each diagram that runs alone (``GET /system/status``)."""
        runtime = self.api.call("GET", "/system/status")["runtime"] or {}
        groups = runtime.get("shared", [])
        members = {m["diagram"] for group in groups for m in group["members"]}
        return len(groups) + len(set(self.deployed) - members)

    def memory(self) -> tuple[int, int]:
        return tree_rss_bytes(self.pid), tree_pss_bytes(self.pid)

    def parts(self) -> dict[str, list[int]]:
        found: dict[str, list[int]] = {}
        for pid in tree(self.pid):
            part = found.setdefault(kind(command(pid)), [0, 0])
            part[0] += 1
            part[1] += pss_bytes(pid)
        return found

    def app_memory(self) -> int:
        """The anonymous PSS of the app's process (gunicorn's worker, the JVM's parent),
        where the catalog, delivery and the runtime's Python side live."""
        jvm = next(p for p in tree(self.pid) if kind(command(p)) == "JVM")
        return anon_pss_bytes(parents()[jvm])

    def idle_cores(self, seconds: float) -> float:
        before, began = tree_cpu_seconds(self.pid), time.perf_counter()
        time.sleep(seconds)
        return (tree_cpu_seconds(self.pid) - before) / (time.perf_counter() - began)


def _started(pid: int) -> float | None:
    try:
        return started(pid)
    except OSError:
        return None


def setup(api: Api) -> None:
    api.call("POST", "/schemas", SCHEMA)
    for name in stream_names():
        api.call("POST", "/streams", {"name": name, "schema": "s"})


def run(args: argparse.Namespace) -> tuple[list[Row], list[Goal], dict]:
    counts = sorted(set(args.diagrams))
    docs = workload(counts[-1], args.seed)
    with tempfile.TemporaryDirectory(prefix="sluice-scale-") as tmp:
        scale = Scale(Path(tmp), args.start_limit)
        try:
            setup(scale.api)
            base = Point(0, resume_s=scale.start_s)  # Spark's cold start, nothing to resume
            measure(scale, base, args)
            points = [base]
            for count in counts:
                point = Point(count)
                for doc in docs[points[-1].count : count]:
                    scale.deploy(doc, point)
                    print(f"{doc['name']}: {len(scale.deployed)} running", file=sys.stderr)
                point.plans = scale.plans()
                measure(scale, point, args)
                scale.restart(point, args.resume_limit)
                time.sleep(args.settle)
                point.pss_resumed = scale.memory()[1]
                points.append(point)
                print(f"{count}: {point}", file=sys.stderr, flush=True)
            # The first deploy after a restart starts Spark's pool of Python workers again (a
            # few hundred MiB once), so another diagram, not one of them, is deployed first.
            same, pss, app = Point(args.identical), [], []
            samedocs = identical(args.identical)
            warm = document("warm", ["feed2", "feed3"], "aggregate", 0)  # no prefix in common
            plans = []
            for batch in ([warm], samedocs[:1], samedocs[1:]):
                for doc in batch:
                    scale.deploy(doc, same)
                time.sleep(args.settle)
                pss.append(scale.memory()[1])
                app.append(scale.app_memory())
                plans.append(scale.plans())
            same.shared = scale.most_sharing()
            same.plans = plans[-1] - plans[0]  # what the identical set started
        except BaseException:
            kept = RESULTS / f"scale-failed-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.log"
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(Path(tmp) / "server.log", kept)
            print(f"the server's log is kept in {kept}", file=sys.stderr)
            raise
        finally:
            scale.close()
    rows, goals = report(points, same, pss, app)
    extra = {
        "points": [vars(p) for p in points],
        "identical": {"pss": pss, "app": app, "point": vars(same)},
        "args": vars(args),
    }
    return rows, goals, extra


def measure(scale: Scale, point: Point, args: argparse.Namespace) -> None:
    """Memory and idle CPU, once the newest queries are past their first batches."""
    time.sleep(args.settle)
    point.rss, point.pss = scale.memory()
    point.parts = scale.parts()
    point.idle_cores = scale.idle_cores(args.idle_seconds)


def report(
    points: list[Point], same: Point, pss: list[int], app: Sequence[int] = ()
) -> tuple[list[Row], list[Goal]]:
    """The table's rows and the goals; ``points[0]`` is the server with no diagrams; ``pss``
    and ``app`` (the app's process's anonymous PSS, empty in runs before it was kept) measured
    before the identical diagrams, with the first of them and with all."""
    base, top = points[0], points[-1]
    rows = [Row(NAME, "server start, empty catalog (Spark's cold start)", "s", base.resume_s)]
    for p in points:
        n = f"{p.count} diagrams:"
        rows += [
            Row(NAME, f"{n} memory of the process tree, RSS summed", "MiB", p.rss / MIB),
            Row(NAME, f"{n} memory of the process tree, PSS", "MiB", p.pss / MIB),
        ]
        rows += [
            Row(NAME, f"{n} of which {part} ({procs})", "MiB", size / MIB)
            for part, (procs, size) in sorted(p.parts.items())
        ]
        rows.append(Row(NAME, f"{n} idle CPU", "cores", p.idle_cores))
        if not p.count:
            continue
        rows += [
            Row(NAME, f"{n} deploy p50 of the {len(p.deploys)} added", "s", _q(p.deploys, 0.5)),
            Row(NAME, f"{n} deploy p90 of the {len(p.deploys)} added", "s", _q(p.deploys, 0.9)),
            Row(NAME, f"{n} create (POST /diagrams) p50", "s", _q(p.creates, 0.5)),
            Row(NAME, f"{n} failed deploys", "deploys", float(p.failed)),
            Row(NAME, f"{n} stop (SIGTERM to exit)", "s", p.stop_s),
            Row(NAME, f"{n} restart -> all running", "s", p.resume_s),
            Row(NAME, f"{n} not running at the limit", "diagrams", float(len(p.not_resumed))),
            Row(NAME, f"{n} PSS after the restart", "MiB", p.pss_resumed / MIB),
        ]
    memory = {p.count: p.pss / MIB for p in points}
    by_plan = {p.plans: p.pss / MIB for p in points}
    resume = {p.count: p.resume_s for p in points}
    idle = {p.count: p.idle_cores for p in points}
    warm = [d for p in points for d in p.deploys][1:]  # the first warms Spark's planning up
    p50 = statistics.median(warm) if warm else float("nan")
    # One diagram's cost is the slope of the workload's memory over the plans it runs: a
    # single deploy's step is mostly where the JVM's heap happened to grow (the first identical
    # one measured 2.5x the next nine's mean, and 29-58 MiB against a slope of 4.8 in later
    # runs), and since plans share their prefixes, a slope over diagrams would average
    # diagrams with a plan of their own and members of another's. The identical set is at
    # most one new plan, whose expected cost is that slope, and members; with the app's
    # anonymous PSS kept, the members are measured there, and the set is the slope plus them.
    before, one, many = pss
    k, per_diagram = same.count, slope(memory)
    counted_plans = len(by_plan) == len(points) and all(p.plans for p in points[1:])
    per_plan = slope(by_plan) if counted_plans else per_diagram  # runs before plans were kept
    moved = (many - before) / MIB / per_plan  # the tree's PSS as it moved in the run
    measured = k >= USERS
    if app:
        members = (app[2] - app[1]) / MIB
        ratio = (per_plan + members) / per_plan
        ratio_users = (per_plan + members * (USERS - 1) / (k - 1)) / per_plan
        parts = (
            f"one plan at the slope ({per_plan:.2f} MiB) and {k - 1} members "
            f"({members:.2f} MiB); {moved:.1f}x as the tree's PSS moved"
        )
        users = (
            f"{ratio:.2f}x at {k}: {parts}"
            if measured
            else f"{ratio:.2f}x at {k}, {ratio_users:.2f}x EXTRAPOLATED to {USERS}: {parts}"
        )
    else:  # a run saved before the app's process was measured: the tree's PSS alone
        ratio = moved
        ratio_users = ratio if measured else ratio * USERS / k
        users = (
            f"{ratio:.1f}x measured at {k}"
            if measured
            else (f"{ratio:.1f}x at {k}; {ratio_users:.0f}x EXTRAPOLATED to {USERS} (linearly)")
        )
    (mem_target, how), (resume_target, _), (idle_target, _) = map(at_target, (memory, resume, idle))
    mem_target /= 1024
    idle_target = max(top.idle_cores, idle_target)  # a fit through noise may fall below zero
    rows += [
        Row(NAME, "memory per diagram (slope of PSS)", "MiB", per_diagram),
        Row(NAME, "memory per plan of its own (slope of PSS over plans)", "MiB", per_plan),
        Row(NAME, f"plans at {top.count} diagrams", "plans", float(top.plans)),
        Row(NAME, "restart -> all running, per diagram (slope)", "s", slope(resume)),
        Row(NAME, "idle CPU per diagram (slope)", "cores", slope(idle)),
        Row(NAME, f"deploy p50, warm (all {len(warm)} but the first)", "s", p50),
        Row(NAME, f"deploy p90, warm (all {len(warm)} but the first)", "s", _q(warm, 0.9)),
        Row(NAME, f"{k} identical diagrams, PSS added", "MiB", (many - before) / MIB),
        Row(
            NAME,
            "  the first of them alone (a JVM heap step included)",
            "MiB",
            (one - before) / MIB,
        ),
        Row(NAME, f"{k} identical diagrams, tree's PSS over one plan (the slope)", "x", moved),
        Row(NAME, f"{k} identical diagrams: most sharing one execution", "diagrams", same.shared),
        Row(NAME, f"{k} identical diagrams: plans they started", "plans", float(same.plans)),
        Row(NAME, f"{how} at {TARGET}: memory, PSS", "GiB", mem_target),
        Row(NAME, f"{how} at {TARGET}: restart -> all running", "s", resume_target),
        Row(NAME, f"{how} at {TARGET}: idle CPU", "cores", idle_target),
        Row(NAME, f"at {TARGET}, p50 times {TARGET}: deploying one by one", "s", TARGET * p50),
    ]
    # A member's own cost, which the tree's PSS cannot resolve: the JVM's heap moves by tens of
    # MiB, and the share of mapped files with whatever else on the machine maps them.
    if app:
        added = (app[2] - app[1]) / (k - 1) / 1024
        rows += [
            Row(NAME, f"  each of the other {k - 1}: app's process, anonymous PSS", "KiB", added),
            Row(NAME, f"{k} identical diagrams: the slope plus the members, over one", "x", ratio),
        ]
    if not measured:
        rows.append(
            Row(NAME, f"EXTRAPOLATED to {USERS} identical diagrams over 1", "x", ratio_users)
        )
    fitted = f"slope through {', '.join(str(c) for c in memory)} diagrams"
    goals = [
        Goal(
            NAME,
            f"{TARGET} diagrams < {GOAL_MEMORY_GB} GB",
            f"{mem_target:.1f} GiB {how} ({fitted}: {per_diagram:.1f} MiB/diagram)",
            mem_target < GOAL_MEMORY_GB,
        ),
        Goal(NAME, f"deploy p50 < {GOAL_DEPLOY_S:g} s warm", f"{p50:.2f} s", p50 < GOAL_DEPLOY_S),
        Goal(
            NAME,
            f"{TARGET} resumed < {GOAL_RESUME_S} s after a restart",
            f"{resume_target:.0f} s {how} ({top.count}: {top.resume_s:.0f} s)",
            resume_target < GOAL_RESUME_S and not top.not_resumed,
        ),
        Goal(
            NAME,
            f"idle CPU < {GOAL_IDLE_CORES} core",
            f"{top.idle_cores:.2f} at {top.count}; {idle_target:.2f} {how} at {TARGET}",
            idle_target < GOAL_IDLE_CORES,
        ),
        Goal(
            NAME,
            f"{USERS} identical diagrams <= {GOAL_SHARED}x one",
            users,
            ratio_users <= GOAL_SHARED,
        ),
    ]
    return rows, goals


def _q(values: list[float], q: float) -> float:
    return percentile(values, q) if values else float("nan")


def counts(text: str) -> list[int]:
    try:
        found = [int(c) for c in text.split(",") if c.strip()]
    except ValueError:
        found = []
    if not found or any(c < 1 for c in found):
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of positive counts like 10,30")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.scale", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--diagrams", type=counts, default=[10, 100, TARGET], help="e.g. 10,30")
    parser.add_argument("--identical", type=int, default=USERS, help="identical diagrams (>= 2)")
    parser.add_argument("--idle-seconds", type=float, default=20.0)
    parser.add_argument("--settle", type=float, default=10.0, help="seconds before measuring")
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--start-limit", type=float, default=3600.0, help="seconds to start")
    parser.add_argument("--resume-limit", type=float, default=3600.0)
    parser.add_argument("--report", type=Path, help="only print the table of a saved run's JSON")
    args = parser.parse_args(argv)
    if args.report:
        saved = json.loads(args.report.read_text())["experiments"][NAME]["extra"]
        points = [Point(**p) for p in saved["points"]]
        same = saved["identical"]
        print(table(*report(points, Point(**same["point"]), same["pss"], same.get("app", []))))
        return 0
    if args.identical < 2:
        parser.error("--identical must be at least 2")
    # SIGTERM (a CI timeout, kill) unwinds like Ctrl-C, so the server is stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    about = machine()
    began = time.perf_counter()
    rows, goals, extra = run(args)
    about["load_average_after"] = os.getloadavg()
    print(table(rows, goals))
    extra["minutes"] = (time.perf_counter() - began) / 60
    path = write(
        "scale",
        {
            "machine": about,
            "experiments": {
                NAME: {
                    "rows": [r.to_dict() for r in rows],
                    "goals": [vars(g) for g in goals],
                    "extra": extra,
                }
            },
        },
    )
    print(
        f"\nresults: {path}; {extra['minutes']:.1f} minutes; load average before "
        f"{about['load_average']}, after {about['load_average_after']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
