"""The runner: owns the SparkSession, the ingestion log and every deployed diagram's queries.

Each output of a diagram is one streaming query (foreachBatch into an ``OutputSink``) with
its own checkpoint under the diagram's versioned directory. All of a diagram's input
streams that share a schema are read by one source instance; each derived input (another
output deployed here) by one of its own over that output's result log, whose retention waits
for every diagram reading it, as the ingestion log's compaction does.

Failures are found by asking the queries themselves (``isActive``, ``exception()``), every
``reconcile_every`` seconds and on every ``status`` call, never by a ``StreamingQueryListener``:
Spark drops listener events when its bus is busy, and a lost termination event would leave a
dead diagram "running" forever. A PySpark listener would also take every progress event over
py4j. A failed output marks its diagram ``failed`` (with the error's one telling line) and
stops that diagram's other outputs; other diagrams carry on.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
import re
import threading
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from boxes import codes, labels, observed
from boxes.compiler import compile_plan
from boxes.document import Plan
from boxes.errors import Conflict, NotFound, SluiceError, Unavailable
from boxes.input import InputBox
from boxes.punctuations.fields import FieldPolicy, field_policy
from boxes.types import Schema
from catalog.clearance import PUBLIC_ONLY, Admission
from server.ingest import AppendReceipt, IngestLog, Limits
from server.ingest.items import split
from server.ingest.punctuated import Governance
from server.ingest.segments import Position
from server.runtime import checkpoints, overlap, sharing
from server.runtime.cluster import cluster_conf, code_archive, is_local
from server.runtime.handover import narrowed
from server.runtime.heads import HeadServer, ResultLogs, result_key
from server.runtime.outputs import NEXT_KEY, OutputSink, Relabeller, Results
from server.runtime.source import derived_frame, input_frames
from server.runtime.spark import (
    DRIVER_GONE,
    build_session,
    discard_session,
    driver_alive,
    driver_pid,
)
from server.runtime.storage import Location
from server.runtime.taps import Callback, DeliveryPool, Tap

log = logging.getLogger(__name__)
RUNNING, STOPPED, FAILED = "running", "stopped", "failed"
STARTING = "starting"  # deploying: its outputs are taken, its queries not yet all up
CHECK_WAIT = 5.0  # seconds a status waits for another caller's check of the same diagram


@dataclass(frozen=True)
class RuntimeSettings:
    # An idle source wakes Spark this often; data ends the wait at once, and so does a stop
    # (the JVM side's channel is interruptible), so it only sets the idle CPU (bench-scale).
    poll_seconds: float = 10.0
    # A stream unmoved this long no longer holds its query's windows back (source.py, idleness)
    idle_seconds: float = 60.0
    recent_rows: int = 200  # last-N cache per output
    retain_result_rows: int = 100_000  # result rows kept on disk per output
    tap_queue: int = 64  # batches a slow tap (delivery) may fall behind, then loses
    delivery_threads: int = 4  # threads that run every tap's callback (taps.py)
    segment_bytes: int = 64 << 20
    limits: Limits = field(default_factory=Limits)
    compact_every: float = 60.0  # seconds between ingestion-log compactions
    max_restarts: int = 3  # automatic restarts of a failed diagram from its checkpoint
    restart_backoff: float = 2.0  # seconds before the first restart, doubled for each next
    deploy_timeout: float = 120.0  # how long a deploy may wait for its queries' sources
    reconcile_every: float = 2.0  # seconds between checks that every running query is alive
    box_metrics: bool = False  # count rows per box (boxes/observed.py; costs throughput)
    share_plans: bool = True  # diagrams whose plans differ only in names run as one (sharing.py)
    # Where checkpoints (and result logs) live, and result logs if elsewhere: a local path or a
    # URL (``storage.py``); None: the data directory, and with the checkpoints.
    state_url: str | None = None
    results_url: str | None = None

    @classmethod
    def of(cls, config: Any) -> RuntimeSettings:
        """The runtime's part of the server's settings (``server.settings.Settings``)."""
        return cls(
            recent_rows=config.recent_tuples,
            retain_result_rows=config.result_retention_rows,
            limits=Limits(max_tuples=config.max_batch_tuples),
            reconcile_every=config.reconcile_seconds,
            deploy_timeout=config.deploy_timeout_seconds,
            state_url=config.state_url and config.state_url.get_secret_value(),
            results_url=config.results_url and config.results_url.get_secret_value(),
            box_metrics=config.box_metrics or config.demo,  # the demo shows what the editor can
            share_plans=config.share_plans,
            delivery_threads=config.delivery_threads,
        )


def fingerprint(plan: Plan) -> str:
    """A version for a plan: any change to its boxes (their parameters too), inputs or schemas
    gives a new checkpoint; nothing else does (``boxes/canonical.py``)."""
    return _digest({**_described(plan), "parameters": [box.parameters() for box in plan.boxes]})


def legacy_fingerprint(plan: Plan) -> str:
    """The version before boxes' parameters counted (a filter's new condition then kept the
    checkpoint): a diagram deployed then resumes where it was, once, under that version."""
    return _digest(_described(plan))


def _described(plan: Plan) -> dict[str, Any]:
    return {
        **plan.to_dict(),
        "schemas": {n: s.to_dict() for n, s in sorted(plan.input_schemas.items())},
    }


def _digest(described: Mapping[str, Any]) -> str:
    text = json.dumps(described, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class _Deployment:
    diagram_id: str
    version: str
    plan: Plan
    directory: checkpoints.DiagramDir
    on_batch: Callback | None = None
    relabel: Relabeller | None = None
    restarts: int = 0
    retry: threading.Timer | None = None
    sinks: dict[str, OutputSink] = field(default_factory=dict)
    queries: dict[str, Any] = field(default_factory=dict)
    query_ids: dict[str, str] = field(default_factory=dict)  # per output, its query's id
    state: str = RUNNING
    error: str | None = None
    failed_output: str | None = None  # the output whose query failed, if one did
    # Rows out per observed box (``boxes/observed.py``): since the deploy, and in the newest
    # batch that ran; and per output, the last batch whose counts are folded in and the time
    # of the newest progress update looked at. Kept across automatic restarts, so a batch
    # replayed from the checkpoint is not counted twice.
    rows: dict[str, int] = field(default_factory=dict)
    batch_rows: dict[str, int] = field(default_factory=dict)
    folded: dict[str, int] = field(default_factory=dict)
    looked: dict[str, str] = field(default_factory=dict)
    # A member of a shared execution (``sharing.py``): its host's runtime id, per output the
    # host's output it reads and the host's position it joined at (None until it has).
    host: str | None = None
    hosted: dict[str, str] = field(default_factory=dict)
    bases: dict[str, int] | None = None
    # ... the plan its host runs (its own, or its prefix) and, if a prefix, its filters.
    shared: Plan | None = None
    residual: overlap.Residual | None = None
    # A prefix host (``overlap.py``): while it runs, what splits its batches among residuals.
    dispatcher: overlap.Dispatcher | None = None
    # ... and while it runs, its taps (``on_batch``'s queues) and the host position it is to
    # be handed rows from next, per output. A host: its logs' ends when its queries started.
    taps: dict[str, Tap] = field(default_factory=dict)
    next_at: dict[str, int] = field(default_factory=dict)
    start_ends: dict[str, int] = field(default_factory=dict)


class Runtime:
    """See the package docstring for the API; every method is safe to call from any thread."""

    def __init__(
        self,
        data_dir: Path,
        spark_master: str = "local[*]",
        spark_conf: Mapping[str, str] | None = None,
        settings: RuntimeSettings = RuntimeSettings(),
        session=None,
        py_files: tuple[Path, ...] = (),
    ) -> None:
        self.data_dir = Path(data_dir)
        self.settings = settings
        self._owns_session = session is None
        self._spark_master, self._spark_conf = spark_master, spark_conf
        self._py_files = py_files
        self.driver_restarts = 0
        self.max_state_rows: int | None = None  # none until the server sets its ceiling
        self.spark = session or build_session(spark_master, spark_conf, py_files=py_files)
        self.log = IngestLog(self.data_dir / "logs", settings.limits, settings.segment_bytes)
        self.result_logs = ResultLogs()
        self.delivery = DeliveryPool(settings.delivery_threads)
        self._heads = HeadServer(self.log, self.result_logs)
        self._diagrams = checkpoints.Diagrams(
            Location.of(settings.state_url or self.data_dir).child("diagrams"),
            Location.of(settings.results_url).child("diagrams") if settings.results_url else None,
        )
        # Locks, always taken in this order: a diagram's own (held through its deploy, restart,
        # stop or check, so that one slow diagram holds up only itself), then ``_launching``
        # (Spark starts one diagram's queries at a time), then ``_lock`` (the registry, held
        # only for a moment). A status read never waits on a diagram's lock.
        self._deployments: dict[str, _Deployment] = {}
        self._awaiting_driver: set[str] = set()  # failed with the driver, resumed by the next
        self._diagram_locks: dict[str, threading.RLock] = {}
        self._launching = threading.Lock()
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)  # notified when a diagram changes state
        self._closed = threading.Event()
        self._threads = [
            threading.Thread(target=target, name=name, daemon=True)
            for target, name in (
                (self._maintain, "runtime-maintenance"),
                (self._reconcile_all, "runtime-reconciler"),
            )
        ]
        for thread in self._threads:
            thread.start()

    @classmethod
    def start(cls, config: Any) -> Runtime:
        """Build from the server's settings (``runtime_path``, ``spark_*``, ``recent_tuples``,
        ``max_batch_tuples``, ``reconcile_seconds``, ``deploy_timeout_seconds``,
        ``box_metrics``); a master that is not local gets the cluster's settings and Sluice's
        code (``cluster.py``)."""
        root = Path(config.runtime_path)
        conf = {"spark.sql.shuffle.partitions": str(config.spark_shuffle_partitions)}
        py_files: tuple[Path, ...] = ()
        if not is_local(config.spark_master):
            conf |= cluster_conf(config)
            py_files = (code_archive(root / "code"),)
        settings = RuntimeSettings.of(config)
        return cls(
            root, config.spark_master, {**conf, **config.spark_conf}, settings, py_files=py_files
        )

    # -- streams ---------------------------------------------------------------------------
    def create_stream(self, name: str, schema: Schema) -> None:
        self.log.create_stream(name, schema)

    def drop_stream(self, name: str) -> None:
        """Delete a stream's log; refused while a deployed diagram (even stopped) reads it."""
        every = self._diagrams.all()
        reading = {d.diagram_id for d in every if name in (d.start() or {})}
        hosts = {h.removeprefix(sharing.HOST) for h in reading if h.startswith(sharing.HOST)}
        members = {d.diagram_id for d in every if (d.membership() or {}).get("key") in hosts}
        readers = sorted({r for r in reading if not r.startswith(sharing.HOST)} | members)
        if readers:
            raise Conflict(
                code=codes.STREAM_IN_USE,
                details={"diagrams": readers},
                name=name,
                diagrams=", ".join(readers),
            )
        self.log.drop_stream(name)

    def append(
        self,
        name: str,
        tuples: list[dict],
        level: Admission = PUBLIC_ONLY,
        governance: Governance | None = None,
    ) -> AppendReceipt:
        """Durably append a batch; ``level`` decides each tuple's Chinese-Wall level label
        (``catalog.clearance.Admission``). With
        ``governance`` (sps govern the stream) the batch holds sps and stamped tuples
        (``server.ingest.items``), logged in order; each tuple gets its policy label at the
        writer."""
        if governance is None:
            return self.log.append(name, tuples, level)
        return self.log.append_parts(name, split(tuples, name), level, governance)

    def set_max_state_rows(self, rows: int) -> None:
        """The most rows of state a diagram may hold (all its outputs' state stores): one that
        holds more is stopped at the next check (``max_state_rows``, a changeable setting)."""
        self.max_state_rows = rows

    def set_max_tuples(self, count: int) -> None:
        """Follow the server's batch limit when an administrator changes it."""
        self.log.limits = dataclasses.replace(self.log.limits, max_tuples=count)

    # -- diagrams --------------------------------------------------------------------------
    def deploy(
        self,
        diagram_id: str,
        plan: Plan,
        on_batch: Callback | None = None,
        version: str | int | None = None,
        relabel: Relabeller | None = None,
    ) -> str:
        """Run every output of ``plan``; resume from the checkpoint of the same version if any.

        ``on_batch(output, table)`` receives each result batch (user fields + ``_label``);
        ``relabel(output, table)`` gives it its policy first, before it is logged (``ON
        RESULT``). Returns the version, by default a fingerprint of the plan. A plan another
        deployed diagram has but for names shares that one's execution (``sharing.py``).
        """
        checkpoints.check_id(diagram_id)
        version = str(version) if version is not None else self._version_of(diagram_id, plan)
        with self._diagram_lock(diagram_id):
            current = self._registered(diagram_id)
            if current is not None:
                self._reconcile(current)  # a dead query is not "already running"
            if current is not None and current.state == RUNNING and current.version == version:
                return version
            if current is not None:
                self._halt(current, STOPPED)
            self._check_inputs(plan)
            directory = self._diagrams.version(diagram_id, version)
            left = self._other_versions(diagram_id, version)
            if self._share(diagram_id, plan, directory, on_batch, relabel):
                self._forget_versions(left)
                return version
            self._deploy_alone(diagram_id, plan, directory, on_batch, relabel, left)
        return version

    def _deploy_alone(
        self,
        diagram_id: str,
        plan: Plan,
        directory: checkpoints.DiagramDir,
        on_batch: Callback | None,
        relabel: Relabeller | None,
        left: list[checkpoints.DiagramDir],
    ) -> None:
        """Start the diagram's own queries (its diagram lock held); ``left``: its other
        versions, removed once it is registered."""
        deployment = _Deployment(
            diagram_id, directory.version, plan, directory, on_batch, relabel, state=STARTING
        )
        with self._changed:  # a new deployment, starting: waiters on its state hear of it
            self._check_outputs_free(diagram_id, plan)
            self._deployments[diagram_id] = deployment
            self._changed.notify_all()
        try:
            self._forget_versions(left)
            directory.fix_start(self._input_heads(plan))
        except Exception as exc:
            self._set_state(deployment, FAILED, f"{type(exc).__name__}: {exc}")
            raise
        with self._launching:
            self._launch(deployment)

    def _other_versions(self, diagram_id: str, version: str) -> list[checkpoints.DiagramDir]:
        return [old for old in self._diagrams.versions(diagram_id) if old.version != version]

    def _forget_versions(self, versions: list[checkpoints.DiagramDir]) -> None:
        """Remove a diagram's old versions; a host none of whose members is left goes too."""
        for old in versions:
            joined = old.membership()
            old.remove()
            if joined is not None:
                self._release(joined["key"])

    # -- shared execution (sharing.py) -----------------------------------------------------
    def _share(
        self,
        diagram_id: str,
        plan: Plan,
        directory: checkpoints.DiagramDir,
        on_batch: Callback | None,
        relabel: Relabeller | None,
    ) -> bool:
        """Deploy the diagram as a member of the host of its plan's key (or of its prefix's:
        ``overlap.py``), starting the host if it is not running; False if it runs alone
        instead: it relabels its results, sharing is off, it ran alone before, its plan has
        state and the host has read since it started (its windows would hold tuples from
        before this diagram came), or the host is stopped and behind its inputs."""
        joined = directory.membership()
        if joined is None and (
            relabel is not None or not self.settings.share_plans or directory.ran_alone()
        ):
            return False
        if joined is None:
            key, shared, residual = overlap.placement(plan)
        elif joined.get("residual"):
            cut = overlap.split(plan)
            assert cut is not None, "a version is one plan: it split when it joined"
            key, (shared, residual) = joined["key"], cut
        else:
            key, shared, residual = joined["key"], plan, None
        try:
            host_plan, names = sharing.hosted(shared, key)
        except ValueError:
            log.exception("diagram %s runs alone", diagram_id)
            return False
        if residual is not None:
            names = {o: overlap.log_name(name, residual.name) for o, name in names.items()}
        host_id = sharing.HOST + key
        with self._diagram_lock(host_id):
            if joined is None and (
                (not sharing.stateless(plan) and self._host_has_read(host_plan))
                or self._host_is_behind(host_id, host_plan)
            ):
                return False
            member = _Deployment(
                diagram_id,
                directory.version,
                plan,
                directory,
                on_batch,
                state=STARTING,
                host=host_id,
                hosted=names,
                bases=None if joined is None else joined["bases"],
                shared=shared,
                residual=residual,
            )
            with self._changed:
                self._check_outputs_free(diagram_id, plan)
                self._deployments[diagram_id] = member
                self._changed.notify_all()
            try:
                host = self._host(host_id, host_plan)
            except SluiceError as err:  # the host's retries attach the member once it runs
                if "diagram" in err.params:  # told as the member's, not the host's
                    err = type(err)(
                        code=err.code, details=err.details, **{**err.params, "diagram": diagram_id}
                    )
                if member.state == STARTING:
                    self._set_state(member, FAILED, str(err))
                raise err from None
            if not member.next_at:  # not attached yet by the host's start (``_launch``)
                self._attach(host, member, joined and joined.get("stopped_at"))
        return True

    def _host_has_read(self, host_plan: Plan) -> bool:
        """Whether the host of ``host_plan`` has a start its inputs have moved on from."""
        directory = self._diagrams.version(host_plan.name, fingerprint(host_plan))
        start = directory.start()
        if start is None:
            return False
        heads = self._input_heads(host_plan)
        return any(heads[name].seq != position.seq for name, position in start.items())

    def _host_is_behind(self, host_id: str, host_plan: Plan) -> bool:
        """Whether the host, not running, would go on from before its inputs' ends: a new
        member joining it would get rows sent before it came, so it runs alone instead."""
        host = self._registered(host_id)
        version = fingerprint(host_plan)
        if host is not None and host.state == RUNNING and host.version == version:
            return False
        directory = self._diagrams.version(host_id, version)
        if directory.start() is None:
            return False
        claims = directory.claims()
        heads = self._input_heads(host_plan)
        return any(claims.get(name, head.seq) < head.seq for name, head in heads.items())

    def _input_heads(self, plan: Plan) -> dict[str, Position]:
        """Where each of a plan's inputs ends now: its streams' logs and the result logs of
        the outputs it reads (keyed ``result_key``), as ``start.json`` records them."""
        derived = [result_key(o) for o in plan.derived().values()]
        return self.log.heads(list(plan.streams())) | self.result_logs.heads(derived)

    def _host(self, host_id: str, host_plan: Plan) -> _Deployment:
        """The host, running: deployed (or resumed from its checkpoint) unless it runs."""
        version = fingerprint(host_plan)
        with self._diagram_lock(host_id):
            host = self._registered(host_id)
            if host is None or host.state != RUNNING or host.version != version:
                if host is not None:
                    self._halt(host, STOPPED)
                directory = self._diagrams.version(host_id, version)
                fan_out = functools.partial(self._fan_out, host_id)
                left = self._other_versions(host_id, version)
                self._deploy_alone(host_id, host_plan, directory, fan_out, None, left)
                host = self._registered(host_id)
            assert host is not None
            return host

    def _attach(
        self, host: _Deployment, member: _Deployment, stopped_at: dict[str, int] | None = None
    ) -> None:
        """Start handing the running host's batches to ``member``. A new member joins at the
        host's result logs' ends, recorded durably before anything reaches it. One that
        joined before is first handed what the host logged since it was stopped
        (``stopped_at``), or else since the host's queries started (a restart), like a
        diagram of its own catching up from its checkpoint. The registry's lock, which
        ``_fan_out`` holds too, makes the switch to live batches a batch boundary."""
        with self._changed:
            if member.residual is not None:
                self._add_residual(host, member.residual)
            sinks = {output: host.sinks[name] for output, name in member.hosted.items()}
            ends = {output: sink.end() for output, sink in sinks.items()}
            if member.bases is None:
                member.bases, resume = dict(ends), dict(ends)
                self._record_membership(member)
            else:
                resume = stopped_at or {
                    output: host.start_ends.get(name, ends[output])
                    for output, name in member.hosted.items()
                }
                if stopped_at is not None:  # handed on below: a crash must not hand them again
                    self._record_membership(member)
            if member.on_batch is not None:
                member.taps = {
                    output: Tap(output, member.on_batch, self.settings.tap_queue, self.delivery)
                    for output in sinks
                }
            for output, tap in member.taps.items():
                for table in sinks[output].logged(resume[output], ends[output]):
                    mine = sharing.from_base(table, member.bases[output], resume[output])
                    if mine is not None:
                        tap.offer(mine)
            member.next_at = ends
            for output, name in member.hosted.items():
                self.result_logs.alias(output, name)
            self._set_state(member, RUNNING)

    def _detach(self, member: _Deployment) -> None:
        """Stop handing a member batches; what it was handed up to is recorded, so deploying
        it again hands it what the host logged meanwhile."""
        with self._changed:
            taps, member.taps = member.taps, {}
            stopped_at, member.next_at = member.next_at, {}
        for tap in taps.values():
            tap.close()
        if stopped_at and member.bases is not None and member.host is not None:
            self._record_membership(member, stopped_at)

    @staticmethod
    def _record_membership(member: _Deployment, stopped_at: dict[str, int] | None = None):
        assert member.host is not None and member.bases is not None
        key = member.host.removeprefix(sharing.HOST)
        residual = member.residual.name if member.residual is not None else None
        member.directory.join(key, member.bases, stopped_at, residual)

    def _add_residual(self, host: _Deployment, residual: overlap.Residual) -> None:
        """Have the running prefix ``host`` split its batches for ``residual`` too, from its
        next batch on (unless it does already): recorded durably first, so a restart of the
        host splits them for it from its first batch."""
        assert host.dispatcher is not None, f"{host.diagram_id} is not a running prefix host"
        (output,) = host.plan.outputs
        name = overlap.log_name(output, residual.name)
        if name in host.sinks:
            return
        kept = host.directory.residuals()
        kept[residual.name] = residual.stored()
        host.directory.keep_residuals(kept)
        sink = self._output_sink(host, name, host.directory.residual_results(residual.name), output)
        host.dispatcher.add(residual, sink)

    def _fan_out(self, host_id: str, output: str, table: pa.Table) -> None:
        """The host's tap: each running member's tap is offered the batch from where it is
        to go on, as its own output's (under the registry's lock: see ``_attach``)."""
        end = int((table.schema.metadata or {})[NEXT_KEY])
        with self._lock:
            for member in self._deployments.values():
                if member.host != host_id or member.state != RUNNING or not member.bases:
                    continue
                for name, hosted in member.hosted.items():
                    tap, since = member.taps.get(name), member.next_at.get(name)
                    if hosted != output or since is None:
                        continue
                    mine = sharing.from_base(table, member.bases[name], since)
                    if mine is not None and tap is not None:
                        tap.offer(mine)
                    member.next_at[name] = max(since, end)

    def _release(self, key: str) -> None:
        """Remove the host of ``key`` once no diagram, registered or on disk, is its member;
        a prefix host's residuals that no member has any more go."""
        host_id = sharing.HOST + key
        with self._lock:
            registered = any(d.host == host_id for d in self._deployments.values())
        if registered and not overlap.is_prefix_host(host_id):
            self._stop_idle_host(host_id)
            return
        joined = [m for m in self._memberships() if m is not None and m.get("key") == key]
        if not registered and not joined:
            self.remove(host_id)
            return
        self._prune_residuals(host_id, {m.get("residual") for m in joined})
        if registered:
            self._stop_idle_host(host_id)

    def _prune_residuals(self, host_id: str, joined: set[str | None]) -> None:
        """Stop splitting a prefix host's batches for residuals that neither a member on
        disk (``joined``) nor a registered one has, and drop their logs. Under the host's
        lock, which a member holds while it joins: none joins meanwhile."""
        with self._diagram_lock(host_id):
            with self._lock:
                members = [d for d in self._deployments.values() if d.host == host_id]
            used = joined | {m.residual.name for m in members if m.residual is not None}
            host = self._registered(host_id)
            for directory in self._diagrams.versions(host_id):
                residuals = directory.residuals()
                unused = set(residuals) - used
                if not unused:
                    continue
                directory.keep_residuals({n: t for n, t in residuals.items() if n in used})
                for name in unused:
                    sink = host.dispatcher.drop(name) if host and host.dispatcher else None
                    if sink is not None and host is not None:
                        with self._lock:
                            host.sinks.pop(sink.name, None)
                            host.start_ends.pop(sink.name, None)
                        sink.close()
                        self.result_logs.forget(sink.name)
                    directory.residual_results(name).delete()

    def _memberships(self) -> list[dict | None]:
        return [d.membership() for d in self._diagrams.all()]

    def _stop_idle_host(self, host_id: str) -> None:
        """Stop a host all of whose registered members are stopped (its checkpoint stays)."""
        with self._lock:
            members = [d for d in self._deployments.values() if d.host == host_id]
        if all(m.state == STOPPED for m in members):
            self.stop(host_id)

    def shared(self) -> list[dict[str, Any]]:
        """Every shared execution with a member deployed since the runtime started: its key,
        its host's state, and per member its state and, per output, the host position it
        joined at (what an administrator sees: which diagrams share what). A host that runs
        a prefix (``overlap.py``) says so, and how many conditions all its members' filters
        have in common (evaluated once); each of its members, its own filters and, if a map
        ends its plan, the map's fields."""
        with self._lock:
            groups: dict[str, list[_Deployment]] = {}
            for deployment in self._deployments.values():
                if deployment.host is not None:
                    groups.setdefault(deployment.host, []).append(deployment)
            hosts = {h: self._deployments.get(h) for h in groups}
            return [
                {
                    "key": host_id.removeprefix(sharing.HOST),
                    "state": host.state if host is not None else STOPPED,
                    "shares": "prefix" if overlap.is_prefix_host(host_id) else "plan",
                    **(
                        {"common_conditions": host.dispatcher.common()}
                        if host is not None and host.dispatcher is not None
                        else {}
                    ),
                    "members": [
                        {
                            "diagram": m.diagram_id,
                            "state": m.state,
                            "joined_at": m.bases,
                            **({"filters": list(m.residual.texts)} if m.residual else {}),
                            **(
                                {"fields": dict(m.residual.fields)}
                                if m.residual and m.residual.fields
                                else {}
                            ),
                        }
                        for m in sorted(members, key=lambda m: m.diagram_id)
                    ],
                }
                for host_id, members in sorted(groups.items())
                for host in (hosts[host_id],)
            ]

    def _version_of(self, diagram_id: str, plan: Plan) -> str:
        """``fingerprint(plan)``; but a diagram whose checkpoint was written under the
        ``legacy_fingerprint`` of this plan keeps that version, bound to this very plan (a
        changed one starts afresh as any does), so an upgrade resumes it where it was."""
        new, old = fingerprint(plan), legacy_fingerprint(plan)
        kept = {d.version: d for d in self._diagrams.versions(diagram_id)}
        legacy = kept.get(old)
        if new in kept or legacy is None or legacy.bound() not in (None, new):
            return new
        legacy.bind(new)
        return old

    def on_disk(self) -> list[str]:
        """The id of every diagram with checkpoints here: running, stopped or left over."""
        return sorted({d.diagram_id for d in self._diagrams.all()})

    def _diagram_lock(self, diagram_id: str) -> threading.RLock:
        with self._lock:
            return self._diagram_locks.setdefault(diagram_id, threading.RLock())

    def _registered(self, diagram_id: str) -> _Deployment | None:
        with self._lock:
            return self._deployments.get(diagram_id)

    def _launch(self, deployment: _Deployment) -> None:
        try:
            self._start_queries(deployment, deployment.directory.start())
        except SluiceError as err:
            self._halt(deployment, FAILED, str(err))
            raise
        except Exception as exc:
            self._halt(deployment, FAILED, f"{type(exc).__name__}: {exc}")
            raise SluiceError(
                code=codes.DEPLOY_FAILED, diagram=deployment.diagram_id, reason=exc
            ) from exc
        self._set_state(deployment, RUNNING)
        with self._lock:  # members whose joining waited for this host to run
            waiting = [
                d
                for d in self._deployments.values()
                if d.host == deployment.diagram_id and d.bases is None and d.state != STOPPED
            ]
        for member in waiting:
            self._attach(deployment, member)

    def _check_inputs(self, plan: Plan) -> None:
        for output in plan.derived().values():
            if self.result_logs.directory(output) is None:
                raise Conflict(code=codes.DERIVED_NOT_DEPLOYED, output=output)
        streams = self.log.schemas()
        for name in plan.streams():
            if name not in streams:
                raise NotFound(details={"stream": name}, what="input stream", name=name)
            if streams[name] != plan.input_schemas[name]:
                raise Conflict(code=codes.SCHEMA_MISMATCH, details={"stream": name}, name=name)

    def _check_outputs_free(self, diagram_id: str, plan: Plan) -> None:
        for other in self._deployments.values():
            clash = set(other.plan.outputs) & set(plan.outputs)
            if other.diagram_id != diagram_id and other.state in (RUNNING, STARTING) and clash:
                raise Conflict(
                    code=codes.OUTPUT_IN_USE,
                    outputs=", ".join(sorted(clash)),
                    diagram=other.diagram_id,
                )

    def _start_queries(self, deployment: _Deployment, start) -> None:
        """Start every output's query, then wait until each query's sources (those its own
        inputs need: ``_sources_opened``) have said hello to the head service (``heads.py``):
        the query's stream thread is running. A deploy whose
        sources have not all said hello within ``deploy_timeout`` is abandoned."""
        client = f"{deployment.diagram_id}/{deployment.version}/{uuid.uuid4().hex}"
        by_schema: dict[Schema, list[str]] = {}
        policy = field_policy(deployment.plan) if deployment.plan.governed else None
        for name in deployment.plan.streams():
            by_schema.setdefault(deployment.plan.input_schemas[name], []).append(name)
        # The tuples a query at a level may see, for its quiet streams' marks (``source.py``).
        level = deployment.plan.clearance
        clearance = {} if level is None else {"clearance": str(level)}
        frames = {}
        for schema, names in by_schema.items():
            options = {
                "root": str(self.log.root),
                "heads": self._heads.address,
                "poll": str(self.settings.poll_seconds),
                "idle": str(self.settings.idle_seconds),
                "client": client,
                "start": json.dumps({n: start[n].to_list() for n in names}),
                **clearance,
            }
            frames.update(input_frames(self.spark, options, names, schema, policy))
        frames.update(self._derived_frames(deployment.plan, start, client, policy, clearance))
        compiled = compile_plan(deployment.plan, frames, self.settings.box_metrics)
        for output, frame in compiled.items():
            checkpoint = deployment.directory.checkpoint(output)
            checkpoints.discard_partial_writes(checkpoint)
            if overlap.is_prefix_host(deployment.diagram_id):
                handle = self._dispatcher(deployment, output).handle
            else:
                location = deployment.directory.results(output)
                handle = self._output_sink(deployment, output, location, output).handle
            deployment.queries[output] = (
                narrowed(frame, len(deployment.plan.label_sources))
                .writeStream.foreachBatch(handle)
                .option("checkpointLocation", checkpoint.hadoop_url)
                .queryName(f"{deployment.diagram_id}.{output}")
                .start()
            )
            deployment.query_ids[output] = deployment.queries[output].id
        queries = list(deployment.queries.values())
        came_up = self._heads.wait_for_clients(
            client,
            _sources_opened(deployment.plan),
            lambda: all(q.isActive for q in queries),
            self.settings.deploy_timeout,
        )
        # A query that ended instead is found failed (and restarted) by the next check.
        if not came_up and all(q.isActive for q in queries):
            raise Unavailable(
                code=codes.DEPLOY_TIMEOUT,
                diagram=deployment.diagram_id,
                seconds=self.settings.deploy_timeout,
            )

    def _output_sink(
        self, deployment: _Deployment, name: str, location: Location, output: str
    ) -> OutputSink:
        """A sink for the log ``name`` of the deployment's ``output`` (the output's own, or a
        residual's of it), registered and tapped by ``on_batch``."""
        relabel = deployment.relabel
        sink = OutputSink(
            name,
            location,
            self.settings.recent_rows,
            self.settings.retain_result_rows,
            self.spark.sparkContext.defaultParallelism,
            acked=functools.partial(self._acked, deployment.directory.checkpoint(output)),
            advanced=functools.partial(self.result_logs.advanced, name),
            claimed=functools.partial(self._claimed, name),
            relabel=functools.partial(relabel, name) if relabel else None,
        )
        deployment.sinks[name] = sink
        deployment.start_ends[name] = sink.end()
        if deployment.on_batch is not None:
            sink.tap(deployment.on_batch, self.delivery, self.settings.tap_queue)
        return sink

    def _dispatcher(self, deployment: _Deployment, output: str) -> overlap.Dispatcher:
        """A prefix host's split of ``output``'s batches, for every residual it has kept."""
        schema = deployment.plan.outputs[output]
        deployment.dispatcher = overlap.Dispatcher(
            self.spark.sparkContext.defaultParallelism, schema.names, self.settings.box_metrics
        )
        for name, stored in sorted(deployment.directory.residuals().items()):
            residual = overlap.Residual.load(stored, schema)
            location = deployment.directory.residual_results(name)
            deployment.dispatcher.add(
                residual,
                self._output_sink(deployment, overlap.log_name(output, name), location, output),
            )
        return deployment.dispatcher

    def _derived_frames(
        self,
        plan: Plan,
        start,
        client: str,
        policy: FieldPolicy | None,
        clearance: dict[str, str],
    ) -> dict[str, Any]:
        """One DataFrame per derived input: its output's result log, from where this diagram
        started reading it (its key in ``start``)."""
        frames = {}
        for box in plan.boxes:
            if isinstance(box, InputBox) and box.output is not None:
                key = result_key(box.output)
                options = {
                    "root": str(self.log.root),
                    "heads": self._heads.address,
                    "poll": str(self.settings.poll_seconds),
                    "client": client,
                    "start": json.dumps({key: start[key].to_list()}),
                    "dirs": json.dumps({key: self._result_url(box.output)}),
                    **clearance,
                }
                words = labels.word_count(len(box.remap))
                frames[box.name] = derived_frame(
                    self.spark, options, key, box.schema, words, policy
                )
        return frames

    def _result_url(self, output: str) -> str:
        location = self.result_logs.directory(output)
        if location is None:  # removed since ``_check_inputs``
            raise Conflict(code=codes.DERIVED_NOT_DEPLOYED, output=output)
        return location.url

    def _claimed(self, output: str) -> int | None:
        """The first row of an output's result log that some diagram reading it (running or
        stopped; through a member's output if shared) has not yet consumed; None if none
        reads it."""
        keys = self.result_logs.keys(output)
        claims = [
            seq
            for directory in self._diagrams.all()
            for key in keys
            if (seq := directory.claims().get(key)) is not None
        ]
        return min(claims, default=None)

    def _acked(self, checkpoint: Location, batch_id: int) -> float | None:
        """When the newest input row of an output's batch was acknowledged: the latest
        acknowledgement among the log heads the batch read up to (Spark's offsets for it)."""
        ends = checkpoints.batch_offsets(checkpoint, batch_id) or {}
        return max(
            (t for name, seq in ends.items() if (t := self.log.acked_at(name, seq)) is not None),
            default=None,
        )

    def stop(self, diagram_id: str) -> None:
        """Stop a diagram's queries; its checkpoint stays, so ``deploy`` resumes where it was."""
        with self._diagram_lock(diagram_id):
            deployment = self._registered(diagram_id)
            if deployment is not None and deployment.state != STOPPED:
                self._halt(deployment, STOPPED)
            if deployment is not None and deployment.host is not None:
                self._stop_idle_host(deployment.host)

    def remove(self, diagram_id: str) -> None:
        """Stop a diagram and forget it: checkpoints, results and its hold on the input logs
        (and a shared execution's host, if it was its last member)."""
        with self._diagram_lock(diagram_id):
            self.stop(diagram_id)
            with self._lock:
                removed = self._deployments.pop(diagram_id, None)
            versions = self._diagrams.versions(diagram_id)
            residuals = {r for directory in versions for r in directory.residuals()}
            for output in removed.plan.outputs if removed is not None else ():
                self.result_logs.forget(output)
                for residual in residuals:  # a prefix host's
                    self.result_logs.forget(overlap.log_name(output, residual))
            self._forget_versions(versions)
            self._diagrams.remove(diagram_id)

    def _halt(self, deployment: _Deployment, state: str, error: str | None = None) -> None:
        if deployment.host is not None:
            self._detach(deployment)
        if deployment.retry is not None:
            deployment.retry.cancel()
            deployment.retry = None
        for query in deployment.queries.values():
            try:
                query.stop()
            except DRIVER_GONE:  # the driver is gone, and its queries with it
                log.warning("could not stop a query of %s", deployment.diagram_id, exc_info=True)
        for sink in deployment.sinks.values():
            sink.close()
        deployment.queries.clear()
        deployment.query_ids.clear()
        deployment.sinks.clear()
        deployment.dispatcher = None
        self._set_state(deployment, state, error or deployment.error)

    def _set_state(self, deployment: _Deployment, state: str, error: str | None = None) -> None:
        """A host's state is its joined members' too, but for those stopped on their own."""
        with self._changed:
            deployment.state, deployment.error = state, error
            if state == RUNNING:
                deployment.failed_output = None
            for member in self._deployments.values():
                if member.host == deployment.diagram_id and member.bases is not None:
                    member.restarts = deployment.restarts
                    if member.state != STOPPED:
                        member.state, member.error = state, error
            self._changed.notify_all()

    def _look(self, deployments: list[_Deployment]) -> dict[str, int]:
        """Per query of the running ``deployments``, by id: -1 if it is no longer active,
        else the rows its state stores held as of its last batch. One call into the JVM
        (``java/.../QueryWatch.java``) for all of them."""
        ids = [i for d in deployments if d.state == RUNNING for i in d.query_ids.values()]
        if not ids:
            return {}
        watch = self.spark.sparkContext._jvm.sluice.source.QueryWatch
        answer = watch.look(self.spark._jsparkSession, ",".join(ids))
        return dict(zip(ids, map(int, answer.split(",")), strict=True))

    def _reconcile(self, deployment: _Deployment, looked: dict[str, int] | None = None) -> None:
        """Fail a running diagram one of whose queries has ended, however Spark's listener
        bus fared; ``looked``: what ``_look`` found (looked up now if not given). Idempotent:
        only a ``running`` diagram's current queries are looked at, and failing stops and
        forgets them, so a second look (another thread, the next round) finds nothing to
        do."""
        with self._diagram_lock(deployment.diagram_id):
            if self._registered(deployment.diagram_id) is not deployment:
                return
            if deployment.state != RUNNING:
                return
            ids = deployment.query_ids.values()
            if looked is None or any(looked.get(i, -1) < 0 for i in ids):
                # Looked at now, under the diagram's lock: a query started since the round's
                # look, or one that looked ended may have been restarted since (same id).
                looked = self._look([deployment])
            for output, query in list(deployment.queries.items()):
                if looked[deployment.query_ids[output]] < 0:
                    deployment.failed_output = output
                    self._halt(deployment, FAILED, _ended(output, query))
                    log.error("diagram %s failed: %s", deployment.diagram_id, deployment.error)
                    self._retry_later(deployment)
                    return
            self._check_state(deployment, sum(looked[i] for i in ids))
            self._fold(deployment)

    def _fold(self, deployment: _Deployment) -> None:
        """Add the box counts of each output's batches that ran since the last fold. Each
        output's counts are read only for the boxes it stands for (``observed.reader``)."""
        if not self.settings.box_metrics:
            return
        readers = observed.reader(deployment.plan)
        for output, query in list(deployment.queries.items()):
            batches, newest = _new_batches(
                query, deployment.folded.get(output, -1), deployment.looked.get(output, "")
            )
            deployment.looked[output] = newest
            for batch in batches:
                counted = observed.counts(batch["observedMetrics"])
                mine = {box: n for box, n in counted.items() if readers.get(box) == output}
                with self._lock:
                    for box, n in mine.items():
                        deployment.rows[box] = deployment.rows.get(box, 0) + n
                    deployment.batch_rows.update(mine)
                    deployment.folded[output] = batch["batchId"]

    def _check_state(self, deployment: _Deployment, rows: int) -> None:
        """Stop a diagram whose state (``rows``, all its queries') outgrew ``max_state_rows``.
        Its cost estimate cannot know this (how many group keys arrive is up to the data);
        left alone, it would grow until the driver runs out of memory and takes every other
        diagram down with it. Not retried: its checkpoint holds the same state."""
        limit = self.max_state_rows
        if limit is None:
            return
        if rows > limit:
            error = Conflict(
                code=codes.STATE_LIMIT_EXCEEDED,
                diagram=deployment.diagram_id,
                rows=rows,
                limit=limit,
            )
            self._halt(deployment, FAILED, str(error))
            log.error("diagram %s stopped: %s", deployment.diagram_id, deployment.error)

    def _reconcile_all(self) -> None:
        while not self._closed.wait(self.settings.reconcile_every):
            if not driver_alive(self.spark):
                self._replace_driver()
                continue
            with self._lock:
                deployments = list(self._deployments.values())
            try:
                looked = self._look(deployments)
            except DRIVER_GONE:  # the next round finds out whether the driver is gone
                continue
            for deployment in deployments:
                busy = self._diagram_lock(deployment.diagram_id)
                if not busy.acquire(blocking=False):
                    continue  # being deployed, stopped or checked: the next round looks again
                try:
                    self._reconcile(deployment, looked)
                except Exception:  # Spark unreachable for a moment: the next round looks again
                    log.exception("checking diagram %s failed", deployment.diagram_id)
                finally:
                    busy.release()

    def _replace_driver(self) -> None:
        """The Spark driver is gone (killed, or exited on running out of memory): fail every
        diagram it ran, start a new driver and resume each from its checkpoint. Nothing
        acknowledged is lost, since the ingestion log lives in this process, not in Spark.
        A driver this runtime did not start (a session handed in) is not its to replace."""
        error = str(Unavailable(code=codes.SPARK_DRIVER_LOST))
        with self._lock:
            deployments = list(self._deployments.values())
        replaced = self._owns_session and not self._closed.is_set()
        resume = []
        for deployment in deployments:
            if deployment.host is not None:
                continue  # a member: its host's state is its own
            with self._diagram_lock(deployment.diagram_id):
                if deployment.state in (RUNNING, STARTING) or deployment.retry is not None:
                    if replaced:  # not given up: resumed once a new driver is up
                        with self._lock:
                            self._awaiting_driver.add(deployment.diagram_id)
                    self._halt(deployment, FAILED, error)
                    resume.append(deployment)
        log.error("the Spark driver is gone; %d diagram(s) stopped with it", len(resume))
        if not replaced:
            return
        with self._launching:
            discard_session(self.spark)
            self.spark = build_session(
                self._spark_master, self._spark_conf, py_files=self._py_files
            )
            self.driver_restarts += 1
        log.warning("a new Spark driver is up; resuming %d diagram(s)", len(resume))
        for deployment in resume:
            self._resume(deployment)

    def _resume(self, deployment: _Deployment) -> None:
        """Start a failed diagram again from its checkpoint, or retry later if it fails."""
        with self._diagram_lock(deployment.diagram_id):
            with self._lock:
                self._awaiting_driver.discard(deployment.diagram_id)
            if (
                self._registered(deployment.diagram_id) is not deployment
                or deployment.state != FAILED
                or self._closed.is_set()
            ):
                return
            deployment.retry = None
            self._set_state(deployment, STARTING, deployment.error)
            try:
                with self._launching:
                    self._launch(deployment)
            except SluiceError:
                self._retry_later(deployment)

    def driver(self) -> dict[str, Any]:
        """The Spark driver: its process (if this runtime launched it), whether it answers, and
        how often it was replaced."""
        return {
            "pid": driver_pid(self.spark),
            "alive": driver_alive(self.spark),
            "restarts": self.driver_restarts,
        }

    def _retry_later(self, deployment: _Deployment) -> None:
        """Restart a failed diagram from its checkpoint a few times, since a failure may be
        passing (e.g. a driver busy past a deploy's time limit)."""
        with self._changed:
            if (
                deployment.retry is None
                and not self._closed.is_set()
                and deployment.restarts < self.settings.max_restarts
            ):
                delay = self.settings.restart_backoff * 2**deployment.restarts
                deployment.restarts += 1
                deployment.retry = threading.Timer(delay, self._resume, args=(deployment,))
                deployment.retry.daemon = True
                deployment.retry.start()
                self._changed.notify_all()

    # -- observing -------------------------------------------------------------------------
    def status(self, diagram_id: str) -> dict[str, Any]:
        """State (``starting``/``running``/``stopped``/``failed`` + error) and per-output
        progress, checked against the queries themselves at the call. A status never waits for a
        deploy or restart (it answers ``starting``), and at most ``CHECK_WAIT`` for a stop or
        another caller's check of the same diagram."""
        deployment = self._registered(diagram_id)
        if deployment is None:
            return {
                "diagram": diagram_id,
                "state": STOPPED,
                "error": None,
                "failed_output": None,
                "outputs": {},
                "boxes": {},
            }
        if deployment.host is not None:
            return self._member_status(deployment)
        busy = self._diagram_lock(diagram_id)
        # A check in progress takes a moment: wait for its verdict. A deploy or restart may
        # take minutes: answer with what is known.
        wait = 0 if deployment.state == STARTING else CHECK_WAIT
        if busy.acquire(timeout=wait):
            try:
                self._reconcile(deployment)
            except DRIVER_GONE:  # the driver is gone: the reconciler replaces it
                log.warning("checking diagram %s failed", diagram_id, exc_info=True)
            finally:
                busy.release()
        progress = {}
        for name, query in list(deployment.queries.items()):
            try:
                progress[name] = query.lastProgress
            except DRIVER_GONE:  # the driver is gone: the reconciler replaces it
                progress[name] = None
        outputs = {
            name: _progress(progress.get(name, progress.get(overlap.fed_by(name))), sink.stats())
            for name, sink in list(deployment.sinks.items())
            if name in progress or overlap.fed_by(name) in progress
        }
        with self._lock:
            rows, batch_rows = dict(deployment.rows), dict(deployment.batch_rows)
        boxes = observed.per_box(deployment.plan, rows) if self.settings.box_metrics else {}
        for name, newest in observed.per_box(deployment.plan, batch_rows).items():
            if name in boxes:
                boxes[name] |= {f"batch_{k}": n for k, n in newest.items()}
        return {
            "diagram": diagram_id,
            "version": deployment.version,
            "state": deployment.state,
            "error": deployment.error,
            "failed_output": deployment.failed_output,
            "restarts": deployment.restarts,
            "outputs": outputs,
            "boxes": boxes,
        }

    def last_progress(self, diagram_id: str) -> dict[str, dict[str, Any] | None]:
        """Per output, Spark's last progress report of the query that computes it (a member's:
        its host's), unfiltered and unchecked: the offsets each source read up to, what the
        backlog is measured from (``server/control/metrics.py``). Empty when not deployed."""
        deployment = self._registered(diagram_id)
        runs = deployment if deployment is None or deployment.host is None else None
        if deployment is not None and deployment.host is not None:
            runs = self._registered(deployment.host)
        if deployment is None or runs is None:
            return {}
        by_output = deployment.hosted or {o: o for o in deployment.plan.outputs}
        answer: dict[str, dict[str, Any] | None] = {}
        for output, name in by_output.items():
            query = runs.queries.get(name) or runs.queries.get(overlap.fed_by(name))
            try:
                answer[output] = query.lastProgress if query is not None else None
            except DRIVER_GONE:  # the driver is gone: the reconciler replaces it
                answer[output] = None
        return answer

    def given_up(self, diagram_id: str) -> bool:
        """Whether the diagram has failed for good: ``failed`` with no automatic restart to
        come (its restarts used up, or a failure that is not retried; not one that a new
        driver will resume) until it is deployed again. What the runtime's threads found; its
        queries are not checked here. A member's restarts are its host's."""
        with self._lock:
            deployment = self._deployments.get(diagram_id)
            if deployment is None or deployment.state != FAILED:
                return False
            runs = self._deployments.get(deployment.host or "") or deployment
            return runs.retry is None and runs.diagram_id not in self._awaiting_driver

    def _member_status(self, member: _Deployment) -> dict[str, Any]:
        """A member's status: its host's, checked now, in the member's names and positions."""
        host = self._registered(member.host or "")
        answer = self.status(member.host or "")
        by_host = {name: output for output, name in member.hosted.items()}
        # a split member's log is fed by the host's output, which is what fails
        by_fed = {overlap.fed_by(n): o for n, o in by_host.items()} if member.residual else {}
        failed = answer["failed_output"]
        outputs = {}
        for name, progress in answer["outputs"].items():
            output = by_host.get(name)
            if output is None:  # another member's filters' log (``overlap.py``)
                continue
            sink = host.sinks.get(name) if host is not None else None
            if sink is not None and member.state == RUNNING and member.bases:
                shown = sharing.SharedOutput(output, sink, member.bases[output]).stats()
                taps = [tap.stats() for tap in [member.taps.get(output)] if tap is not None]
                outputs[output] = {
                    **progress,
                    **shown,
                    "subscribers": taps,
                    "dropped_batches": sum(t["dropped_batches"] for t in taps),
                    "dropped_rows": sum(t["dropped_rows"] for t in taps),
                }
        boxes = host.plan.boxes if host is not None else ()
        mine = (member.shared or member.plan).boxes
        names = {h.name: m.name for h, m in zip(boxes, mine, strict=False)}
        counted = {names[box]: rows for box, rows in answer["boxes"].items() if box in names}
        if member.residual is not None:  # the host's output counts the prefix's rows: the
            # member's filters, map and output have the rows its residual's split counted
            (output,) = member.plan.outputs
            counted.pop(output, None)
            split = host.dispatcher if host is not None else None
            residual_counts = split.counts(member.residual.name) if split is not None else None
            if residual_counts is not None:  # a runtime that counts rows per box
                counted |= residual_counts.per_box(member.residual, output)
        return {
            **answer,
            "diagram": member.diagram_id,
            "version": member.version,
            "state": member.state,
            "error": member.error,
            "failed_output": by_host.get(failed, by_fed.get(failed)),
            "outputs": outputs,
            "boxes": counted,
        }

    def carry(self, diagram_id: str, plan: Plan, outputs: Iterable[str]) -> list[str]:
        """Before ``plan`` replaces a diagram's stopped version: give the version it will
        deploy under (``deploy``'s default) the checkpoints and result logs of ``outputs``, so
        their state (windows, joins) and result positions go on where they were. Which
        outputs may resume under a changed plan is the caller's judgement (Spark resumes a
        query whose stateless operators changed, not one whose stateful ones did). Returns
        those carried: none from a version still running, and of a shared execution's member
        only those the host logged for it alone from its start (base 0, no other member
        running), since the host's checkpoint and log (its residual's, under a prefix host)
        are then the member's own."""
        with self._diagram_lock(diagram_id):
            current = self._registered(diagram_id)
            if current is None or current.state != STOPPED:
                return []
            version = self._version_of(diagram_id, plan)
            if version == current.version:
                return [o for o in outputs if o in current.plan.outputs]
            target = self._diagrams.version(diagram_id, version)
            carried = []
            for output in outputs:
                source = self._own_logs(current, output)
                if source is not None:
                    target.adopt(output, *source)
                    carried.append(output)
            return carried

    def _own_logs(self, deployment: _Deployment, output: str) -> tuple[Location, Location] | None:
        """Where a stopped deployment's ``output`` keeps its checkpoint and results, if they
        are its own (``carry``)."""
        if output not in deployment.plan.outputs:
            return None
        if deployment.host is None:
            return deployment.directory.checkpoint(output), deployment.directory.results(output)
        host = self._registered(deployment.host)
        with self._lock:
            others = [
                d
                for d in self._deployments.values()
                if d.host == deployment.host and d is not deployment and d.state != STOPPED
            ]
        if host is None or others or host.state == RUNNING:
            return None
        if (deployment.bases or {}).get(output) != 0:
            return None
        if deployment.residual is None:
            hosted = deployment.hosted[output]
            return host.directory.checkpoint(hosted), host.directory.results(hosted)
        (prefix,) = host.plan.outputs  # a prefix host has one output, split per residual
        residual = deployment.residual.name
        return host.directory.checkpoint(prefix), host.directory.residual_results(residual)

    def evaluate(self, plan: Plan, inputs: Mapping[str, pa.Table]) -> pa.Table:
        """``plan``'s one output computed once, as a batch job, over ``inputs`` (per input,
        rows as its source reads them): a box's data preview (``server.control.preview``)."""
        frames = {name: self.spark.createDataFrame(table) for name, table in inputs.items()}
        (frame,) = compile_plan(plan, frames).values()
        return frame.toArrow()

    def plan(self, diagram_id: str) -> Plan | None:
        """The plan a diagram was last deployed with (None if it never was here)."""
        deployment = self._registered(diagram_id)
        return None if deployment is None else deployment.plan

    def wait_for_state(
        self, diagram_id: str, state: str, restarts: int | None = None, timeout: float | None = None
    ) -> dict[str, Any] | None:
        """Wait until a diagram is in ``state`` (after ``restarts`` automatic restarts, if given)
        and return ``{state, error, restarts}`` as they were then; None after ``timeout``.
        Its queries are not checked here: this is what the runtime's own threads found."""

        def reached() -> bool:
            deployment = self._deployments.get(diagram_id)
            return (
                deployment is not None
                and deployment.state == state
                and restarts in (None, deployment.restarts)
            )

        with self._changed:
            if not self._changed.wait_for(reached, timeout):
                return None
            deployment = self._deployments[diagram_id]
            return {
                "state": deployment.state,
                "error": deployment.error,
                "restarts": deployment.restarts,
            }

    def listener_bus(self) -> dict[str, Any] | None:
        """Spark's listener-bus counters: events posted, and events each queue dropped because
        a listener was too slow (``streams`` carries query events). None if Spark does not
        expose them (e.g. a Spark Connect session)."""
        try:
            counters = (
                self.spark.sparkContext._jsc.sc()
                .listenerBus()
                .metrics()
                .metricRegistry()
                .getCounters()
            )
            dropped = {
                name[len("queue.") : -len(".numDroppedEvents")]: counters[name].getCount()
                for name in list(counters)
                if name.startswith("queue.") and name.endswith(".numDroppedEvents")
            }
            return {
                "events_posted": counters["numEventsPosted"].getCount(),
                "dropped_events": dropped,
            }
        except (*DRIVER_GONE, AttributeError, KeyError, TypeError):
            log.warning("Spark's listener-bus metrics are not reachable", exc_info=True)
            return None

    def _sink(self, output: str) -> OutputSink | sharing.SharedOutput:
        with self._lock:
            for deployment in self._deployments.values():
                if output in deployment.sinks:
                    return deployment.sinks[output]
                if deployment.state == RUNNING and deployment.bases and output in deployment.bases:
                    host = self._deployments.get(deployment.host or "")
                    sink = host.sinks.get(deployment.hosted[output]) if host else None
                    if sink is not None:
                        return sharing.SharedOutput(output, sink, deployment.bases[output])
        raise NotFound(details={"output": output}, what="running output", name=output)

    def recent(self, output: str, n: int | None = None) -> pa.Table | None:
        """The last ``n`` result tuples of a running output (None if it has none or is not
        running)."""
        try:
            return self._sink(output).recent(n)
        except NotFound:
            return None

    def results(self, output: str, start: int, max_rows: int) -> Results:
        """A running output's results from row position ``start`` (see ``OutputSink.read_from``)."""
        return self._sink(output).read_from(start, max_rows)

    # -- housekeeping ----------------------------------------------------------------------
    def compact(self) -> dict[str, int]:
        """Delete log segments that no deployed diagram (running or stopped) still needs."""
        claims: dict[str, int] = {}
        for directory in self._diagrams.all():
            for name, seq in directory.claims().items():
                claims[name] = min(claims.get(name, seq), seq)
        heads = self.log.heads(list(self.log.schemas()))
        return {
            name: self.log.truncate(name, claims.get(name, head.seq))
            for name, head in heads.items()
        }

    def _maintain(self) -> None:
        while not self._closed.wait(self.settings.compact_every):
            try:
                self.compact()
            except Exception:  # compaction is retried at the next round
                log.exception("ingestion log compaction failed")

    def close(self) -> None:
        """Stop every query (checkpoints stay), the log and, if this runtime made it, Spark."""
        self._closed.set()
        with self._lock:
            deployments = list(self._deployments.values())
        for deployment in deployments:
            with self._diagram_lock(deployment.diagram_id):
                if deployment.state != STOPPED:
                    self._halt(deployment, STOPPED)
        for thread in self._threads:
            thread.join()
        self.delivery.close()
        self._heads.close()
        self.log.close()
        if self._owns_session:
            self.spark.stop()


def _sources_opened(plan: Plan) -> int:
    """How many sources the plan's queries open, all told. Each output's query opens those
    of the frames its boxes read: one per schema of the streams upstream of it (one source
    serves all of a schema's streams) and one per derived input upstream of it; nothing for
    another output's inputs."""
    streams, derived = set(plan.streams()), plan.derived().keys()
    return sum(
        len({plan.input_schemas[n] for n in boxes & streams}) + len(boxes & derived)
        for boxes in observed.lineages(plan).values()
    )


def _summary(error: str) -> str:
    """The line that says what went wrong, without Spark's wrapping, stack or the query's plan:
    a Python traceback's last line, else the innermost cause, each without its class's module.

    >>> _summary("[STREAM_FAILED] Query [id = 1] terminated with exception: "
    ...          "[X] Failed: Traceback (most recent call last):\\n  File ...\\n"
    ...          "server.ingest.segments.LogGap: [LOG_GAP] rows 0 to 0 are missing\\n"
    ...          " SQLSTATE: 38000\\n=== Streaming Query ===\\nIdentifier: q")
    '[LOG_GAP] rows 0 to 0 are missing'
    """
    text = error.split("\n=== Streaming Query ===", 1)[0]
    lines = [
        line
        for line in text.strip().splitlines()
        if line.strip() and not line[0].isspace() and not line.startswith("SQLSTATE")
    ]
    if not lines:
        return "the query failed"
    line = lines[-1] if "Traceback (most recent call last)" in text else lines[0]
    line = line.rsplit(" terminated with exception: ", 1)[-1]
    return re.sub(r"^[\w.]+\.(?=\w+: )", "", re.sub(r"^[\w.]+: (?=\[[A-Z_]+\])", "", line))[:500]


def _ended(output: str, query: Any) -> str:
    """Why an output's query ended: its error's telling line, or that something stopped it."""
    error = query.exception()
    if error is None:
        return f"output {output!r} stopped unexpectedly"
    return _summary(str(error))


def _new_batches(query: Any, after: int, looked: str) -> tuple[list[dict[str, Any]], str]:
    """The progress of the query's batches that ran after batch ``after``, oldest first, among
    the updates newer than time ``looked``; and the newest update's time (the next ``looked``).

    Read from the newest back, down to the update looked at last time, so a check costs a few
    py4j calls, however many idle updates (no data) the query keeps. Only a batch that ran
    reports observed metrics: an idle update names the next batch's id before it runs, and is
    skipped. Update times are ISO-8601 in UTC, so they compare as text."""
    found: list[dict[str, Any]] = []
    newest = looked
    try:
        updates = query._jsq.recentProgress()
        for i in range(len(updates) - 1, -1, -1):
            progress = json.loads(updates[i].json())
            if progress["timestamp"] <= looked:
                break
            newest = max(newest, progress["timestamp"])
            if progress.get("observedMetrics") and progress["batchId"] > after:
                found.append(progress)
    except DRIVER_GONE:  # the driver is gone: the reconciler replaces it
        return [], looked
    return found[::-1], newest


def _state_rows(progress: Mapping[str, Any] | None) -> int:
    """Rows held by a query's state stores (windows, join buffers), as of its last batch."""
    return sum(op.get("numRowsTotal", 0) for op in (progress or {}).get("stateOperators", []))


def _progress(progress: Mapping[str, Any] | None, delivered: Mapping[str, Any]) -> dict[str, Any]:
    state_rows = _state_rows(progress)
    progress = progress or {}
    return {
        "state_rows": state_rows,
        "batch_id": progress.get("batchId"),
        "input_rows": progress.get("numInputRows", 0),
        "input_rows_per_second": progress.get("inputRowsPerSecond", 0.0),
        "processed_rows_per_second": progress.get("processedRowsPerSecond", 0.0),
        "batch_duration_ms": (progress.get("durationMs") or {}).get("triggerExecution"),
        **delivered,
    }
