"""Spark's real-time mode against today's micro-batches (issue 41), in one run.

    python -m bench.realtime_latency [--samples 100] [--diagram filter] [--rate 1000]
        [--arms micro-batch,logged,real-time]

Copies of one diagram (a filter, or a windowed aggregate) read their own streams of one
runtime, each arm one copy:

* ``micro-batch``: deployed as the server deploys it (``foreachBatch`` into the output's
  result log, then its tap);
* ``logged``: deployed with ``realtime: true`` on a runtime with a real-time slot, so it runs
  as the server runs a real-time output: the log source's real-time stream, the JVM writer
  ``RowSender.java`` to the server's receiver, each group appended durably to the result log
  (with how far it read), then offered to the tap (``server/runtime/realtime.py``);
* ``real-time``: the same compiled plan started by hand with ``trigger(realTime=)`` and
  ``RowSender`` writing to a socket here, nothing logged: what real-time mode could buy.

Samples alternate between the arms (which goes first rotates), one tuple at a time at
varying phases: latency is from the append's acknowledgement to the row's arrival at the
server (the tap's callback, or the socket). Each real-time arm holds a core for its life, so
on 2 cores run at most one of them beside the micro-batches (the default: micro-batch and
logged). See docs/architecture.md, "Real-time mode (issue 41)".
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import socketserver
import statistics
import tempfile
import threading
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from boxes.compiler import compile_plan
from boxes.document import validate
from boxes.types import Schema, parse_schema
from server.runtime import realtime
from server.runtime.config import RuntimeSettings
from server.runtime.source import input_frames

_SCHEMA, _ = parse_schema(
    {"fields": {"time": "timestamp", "symbol": "string", "price": "double"}, "event_time": "time"},
    "s",
)
assert _SCHEMA is not None
SCHEMA: Schema = _SCHEMA
ARMS = ("micro-batch", "logged", "real-time")
BOXES: dict[str, dict[str, Any]] = {
    "filter": {"type": "filter", "where": "price >= 0"},
    "aggregate": {
        "type": "aggregate",
        "window": {"size": "10s"},
        "group_by": ["symbol"],
        "aggregates": {"avg_price": "avg(price)"},
    },
}


def diagram(name: str, stream: str, kind: str, real_time: bool = False):
    doc = {
        "realtime": real_time,
        "version": 1,
        "name": name,
        "inputs": {stream: {}},
        "boxes": {"kept": {**BOXES[kind], "in": stream}},
        "outputs": {f"{name}_out": {"from": "kept"}},
    }
    return validate(doc, {stream: SCHEMA})


class Arrivals:
    """When each symbol first reached the server, the labels it came with, and the input
    position it was sent with each time (a micro-batch's rows: none)."""

    def __init__(self) -> None:
        self.at: dict[str, float] = {}
        self.places: dict[str, list[tuple[str, int] | None]] = {}
        self.labels: dict[str, object] = {}
        self.epochs_ended = 0
        self.changed = threading.Condition()

    def arrived(self, symbol: str, label: object, place: tuple[str, int] | None = None) -> None:
        now = time.perf_counter()
        with self.changed:
            self.at.setdefault(symbol, now)
            self.places.setdefault(symbol, []).append(place)
            self.labels.setdefault(symbol, label)
            self.changed.notify_all()

    def repeated(self) -> tuple[int, int]:
        """How many symbols came more than once, and how many of those came each time from
        the same input position (what the receiver skips by)."""
        twice = [p for p in self.places.values() if len(p) > 1]
        return len(twice), sum(1 for p in twice if p[0] is not None and len(set(p)) == 1)

    def wait(self, symbol: str, timeout: float) -> float | None:
        with self.changed:
            self.changed.wait_for(lambda: symbol in self.at, timeout)
            return self.at.get(symbol)


def receiver(arrivals: Arrivals) -> socketserver.ThreadingTCPServer:
    """A stand-in for the server's receiver (``realtime.Receiver``) that logs nothing: a
    connection is one epoch's partition (a header line, a row per line with its input's
    position, an empty line that ends the epoch, answered ``ok``)."""

    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            self.rfile.readline()  # the header
            for line in self.rfile:
                if line == b"\n":
                    arrivals.epochs_ended += 1
                    self.wfile.write(b"ok\n")
                    return
                stream, seq, text = realtime.row_of(line.rstrip(b"\n"))
                row = json.loads(text)
                arrivals.arrived(row["symbol"], row.get("_label"), (stream, seq))

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def start_realtime(
    rt, plan, stream: str, start: str, address: str, batch: str, checkpoint: Path, sink: str
):
    """The plan's one output as a real-time query from ``start`` (fixed once, as a deploy
    fixes it) writing to ``address`` (``sink`` ``foreach``), or to a Python function as the
    server's micro-batch outputs do (``foreachBatch``: only to show what Spark says to that)."""
    launcher = rt._launcher  # the running server's Spark session and head service
    spark = launcher.spark
    options = {
        "root": str(rt.log.root),
        "heads": launcher.heads.address,
        "poll": str(rt.settings.poll_seconds),
        "idle": str(rt.settings.idle_seconds),
        "client": f"bench/{uuid.uuid4().hex}",
        "start": start,
        "realtime": "true",
    }
    frames = input_frames(spark, options, [stream], SCHEMA)
    (frame,) = compile_plan(plan, frames).values()
    if sink == "foreachBatch":
        return (
            frame.writeStream.foreachBatch(lambda batch_frame, batch_id: None)
            .trigger(realTime=batch)
            .outputMode("update")
            .option("checkpointLocation", str(checkpoint))
            .start()
        )
    stand_in = SimpleNamespace(address=address)
    return realtime.start_query(frame, stand_in, "bench", str(checkpoint), batch, "bench.rt")


def offered_load(rt, stream: str, arrivals: Arrivals, prefix: str, rate: int, seconds: float):
    """Append ``rate`` tuples a second (a batch of 10 every 10 ms) for ``seconds``; return
    the rows a second that reached the server (first append to last arrival) and each
    tuple's latency in ms."""
    acked: dict[str, float] = {}
    per_append = 10
    appends = int(rate * seconds) // per_append
    begin = time.perf_counter()
    for k in range(appends):
        symbols = [f"{prefix}{k}.{j}" for j in range(per_append)]
        now = datetime.now(timezone.utc).isoformat()
        rt.append(stream, [{"time": now, "symbol": s, "price": 1.0} for s in symbols])
        at = time.perf_counter()
        acked.update(dict.fromkeys(symbols, at))
        time.sleep(max(0.0, begin + (k + 1) * per_append / rate - time.perf_counter()))
    last = symbols[-1]
    arrivals.wait(last, 60.0)
    with arrivals.changed:
        got = {s: arrivals.at[s] for s in acked if s in arrivals.at}
    rows_per_s = len(got) / (max(got.values()) - begin) if got else 0.0
    return rows_per_s, [1000 * (got[s] - acked[s]) for s in got]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


def summary(values: list[float], blocks: int = 5) -> dict:
    """p50 and p99 in ms, with the spread of p50 over ``blocks`` consecutive blocks."""
    size = max(1, len(values) // blocks)
    medians = [statistics.median(values[i : i + size]) for i in range(0, len(values), size)]
    return {
        "n": len(values),
        "p50": percentile(values, 0.5),
        "p99": percentile(values, 0.99),
        "max": max(values),
        "p50 spread": (min(medians), max(medians)),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument(
        "--batch", type=float, default=5.0, help="real-time mode's batch, seconds (>= 5)"
    )
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument(
        "--diagram",
        choices=sorted(BOXES),
        default="filter",
        help="aggregate: real-time only; a micro-batch window is emitted when later tuples "
        "move the watermark past its end, which one tuple at a time never does",
    )
    parser.add_argument("--arms", help="comma-separated, of: " + ", ".join(ARMS))
    parser.add_argument(
        "--shuffle-partitions",
        type=int,
        help="for the real-time query: a real-time aggregate needs a task slot per shuffle "
        "partition besides its source's, all at once",
    )
    parser.add_argument(
        "--restart-every",
        type=int,
        help="stop the real-time query after every so many samples and start it again from "
        "its checkpoint: its unfinished epoch runs again",
    )
    parser.add_argument("--rate", type=int, help="then offer this many tuples a second")
    parser.add_argument("--seconds", type=float, default=10.0, help="for --rate, per mode")
    parser.add_argument("--sink", choices=("foreach", "foreachBatch"), default="foreach")
    args = parser.parse_args()
    default = ARMS[:2] if args.diagram == "filter" else ARMS[2:]
    arms = tuple(args.arms.split(",")) if args.arms else default

    from server.runtime import Runtime

    load_before = os.getloadavg()
    root = Path(tempfile.mkdtemp(prefix="sluice-rtm-"))
    settings = RuntimeSettings(
        realtime_slots=1 if "logged" in arms else 0, realtime_batch_seconds=args.batch
    )
    rt = Runtime(root / "rt", "local[2]", settings=settings)
    arrivals = {arm: Arrivals() for arm in ARMS}
    socket = receiver(arrivals["real-time"])
    streams = {"micro-batch": "mb_in", "logged": "lg_in", "real-time": "rt_in"}
    for stream in streams.values():
        rt.create_stream(stream, SCHEMA)

    def tap(arm: str):
        def on_batch(output, table) -> None:
            labels = table.column("_label").to_pylist()
            for symbol, label in zip(table.column("symbol").to_pylist(), labels, strict=True):
                arrivals[arm].arrived(symbol, label)

        return on_batch

    if "micro-batch" in arms:
        rt.deploy("mb", diagram("mb", "mb_in", args.diagram), tap("micro-batch"))
    if "logged" in arms:
        rt.deploy("lg", diagram("lg", "lg_in", args.diagram, real_time=True), tap("logged"))
        mode = rt.status("lg")["outputs"]["lg_out"]
        if mode["mode"] != "real-time":
            raise SystemExit(f"the logged arm runs in micro-batches: {mode['mode_reason']}")
    address = f"127.0.0.1:{socket.server_address[1]}"
    plan = diagram("rtm", "rt_in", args.diagram)
    query = None
    if "real-time" in arms:
        if args.shuffle_partitions:
            rt._launcher.spark.conf.set("spark.sql.shuffle.partitions", args.shuffle_partitions)
        checkpoint = root / "rtm-ckpt"
        start = json.dumps({"rt_in": rt.log.heads(["rt_in"])["rt_in"].to_list()})
        batch = f"{args.batch:g} seconds"
        restarted = functools.partial(
            start_realtime, rt, plan, "rt_in", start, address, batch, checkpoint, args.sink
        )
        query = restarted()
    latencies: dict[str, list[float]] = {arm: [] for arm in ARMS}
    loaded: dict[str, tuple[float, list[float]]] = {}
    lost = dict.fromkeys(ARMS, 0)
    try:
        for i in range(args.warmup + args.samples):
            for arm in arms if i % 2 else arms[::-1]:
                symbol = f"{arm[0]}{i}"
                now = datetime.now(timezone.utc).isoformat()
                rt.append(streams[arm], [{"time": now, "symbol": symbol, "price": 1.0}])
                acked = time.perf_counter()
                arrived = arrivals[arm].wait(symbol, args.timeout)
                if query is not None and query.exception() is not None:
                    raise SystemExit(f"the real-time query failed: {query.exception()}")
                if arrived is None:
                    lost[arm] += 1
                elif i >= args.warmup:
                    latencies[arm].append(1000 * (arrived - acked))
                time.sleep(0.02 + (i % 7) * 0.013)  # arrivals at varying phases of a batch
            if query is not None and args.restart_every and (i + 1) % args.restart_every == 0:
                query.stop()
                query = restarted()
        for arm in arms if args.rate else ():
            loaded[arm] = offered_load(
                rt, streams[arm], arrivals[arm], f"{arm[0]}r", args.rate, args.seconds
            )
    finally:
        progress = query.lastProgress if query is not None else None
        if query is not None:
            query.stop()
        socket.shutdown()
        rt.close()
    load = ", ".join(f"{a:.1f}-{b:.1f}" for a, b in zip(load_before, os.getloadavg(), strict=True))
    print(f"{args.diagram} diagram, {args.samples} interleaved samples, batch {args.batch:g} s")
    print(f"load average (1, 5, 15 min) at the start and the end: {load}")
    header = f"{'mode':<12} {'n':>4} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}"
    print(header + "  p50 spread (5 blocks), lost, delivered twice")
    for arm in arms:
        if not latencies[arm]:
            print(f"{arm:<12} no samples (lost {lost[arm]})")
            continue
        s = summary(latencies[arm])
        low, high = s["p50 spread"]
        print(
            f"{arm:<12} {s['n']:>4} {s['p50']:>8.1f} {s['p99']:>8.1f} {s['max']:>8.1f}"
            f"  {low:.1f}-{high:.1f}, lost {lost[arm]}"
            ", twice {} (same input position each time: {})".format(*arrivals[arm].repeated())
        )
    for arm, (rows_per_s, under_load) in loaded.items():
        s = summary(under_load)
        print(
            f"{arm:<12} at {args.rate}/s offered for {args.seconds:g} s: {rows_per_s:.0f} rows/s"
            f" reached the server ({s['n']}), p50 {s['p50']:.1f} ms, p99 {s['p99']:.1f} ms"
        )
    labels = {arm: sorted({str(v) for v in arrivals[arm].labels.values()}) for arm in arms}
    print(f"labels seen: {labels}; real-time epochs ended: {arrivals['real-time'].epochs_ended}")
    if progress is not None:
        print(f"real-time query's last progress: batch {progress['batchId']}")


if __name__ == "__main__":
    main()
