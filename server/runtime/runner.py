"""The runtime: owns the SparkSession, the ingestion log and every deployed diagram, and is
the one face the server sees (the package docstring lists it). It puts its parts together:
the registry of deployments (``registry.py``, states in ``states.py``), the launcher of
queries (``launcher.py``), the supervisor (``supervisor.py``), shared execution
(``execution.py``) and the status view (``status.py``); deploy, stop and remove are its own.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from boxes import codes
from boxes.document import Plan
from boxes.errors import Conflict
from boxes.types import Schema
from catalog.clearance import PUBLIC_ONLY, Admission
from server.ingest import AppendReceipt, IngestLog
from server.ingest.items import split
from server.ingest.punctuated import Governance
from server.runtime import checkpoints, overlap, sharing
from server.runtime.cluster import cluster_conf, code_archive, is_local
from server.runtime.config import RuntimeSettings
from server.runtime.deployment import Deployment, Hosting
from server.runtime.execution import SharedExecution
from server.runtime.heads import ResultLogs
from server.runtime.launcher import Launcher
from server.runtime.outputs import Asked, Relabeller, Results
from server.runtime.registry import Registry
from server.runtime.spark import build_session
from server.runtime.states import FAILED, RUNNING, STARTING, STOPPED, State
from server.runtime.status import StatusView
from server.runtime.storage import Location
from server.runtime.supervisor import Supervisor
from server.runtime.taps import Callback, DeliveryPool
from server.runtime.versions import version_of

log = logging.getLogger(__name__)


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
        spark = session or build_session(spark_master, spark_conf, py_files=py_files)
        self.log = IngestLog(self.data_dir / "logs", settings.limits, settings.segment_bytes)
        self.result_logs = ResultLogs()
        self.delivery = DeliveryPool(settings.delivery_threads)
        self._diagrams = checkpoints.Diagrams(
            Location.of(settings.state_url or self.data_dir).child("diagrams"),
            Location.of(settings.results_url).child("diagrams") if settings.results_url else None,
        )
        self._registry = Registry()
        self._launcher = Launcher(
            spark,
            self._registry,
            self.log,
            self.result_logs,
            self._diagrams,
            self.delivery,
            settings,
        )
        self._sharing = SharedExecution(
            self,
            self._registry,
            self._launcher,
            self._diagrams,
            self.result_logs,
            self.delivery,
            settings,
        )
        self._supervisor = Supervisor(
            self._registry,
            self._launcher,
            settings,
            self._sharing.launched,
            session is None,
            spark_master,
            spark_conf,
            py_files,
        )
        self._view = StatusView(self._registry, self._supervisor, settings)
        self._threads = [
            threading.Thread(target=target, name=name, daemon=True)
            for target, name in (
                (self._maintain, "runtime-maintenance"),
                (self._supervisor.run, "runtime-reconciler"),
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

    @property
    def spark(self):
        """The session queries run on (a new one once a lost driver is replaced)."""
        return self._launcher.spark

    @property
    def driver_restarts(self) -> int:
        return self._supervisor.driver_restarts

    @property
    def max_state_rows(self) -> int | None:
        return self._supervisor.max_state_rows

    # -- streams ---------------------------------------------------------------------------
    def create_stream(self, name: str, schema: Schema) -> None:
        self.log.create_stream(name, schema)

    def drop_stream(self, name: str) -> None:
        """Delete a stream's log; refused while a deployed diagram (even stopped) reads it."""
        every = self._diagrams.all()
        reading = {d.diagram_id for d in every if name in (d.start() or {})}
        hosts = {h.removeprefix(sharing.HOST) for h in reading if sharing.is_host(h)}
        members = {d.diagram_id for d in every if (d.membership() or {}).get("key") in hosts}
        readers = sorted({r for r in reading if not sharing.is_host(r)} | members)
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
        tuples: list[Mapping[str, Any]],
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
        self._supervisor.max_state_rows = rows

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
        if version is None:
            version = version_of(self._diagrams, diagram_id, plan)
        version = str(version)
        with self._registry.diagram_lock(diagram_id):
            current = self._registry.get(diagram_id)
            if current is not None:
                self._supervisor.check(current)  # a dead query is not "already running"
            if current is not None and current.state == RUNNING and current.version == version:
                return version
            if current is not None:
                self._halt(current, STOPPED)
            self._launcher.check_inputs(plan)
            directory = self._diagrams.version(diagram_id, version)
            left = self._other_versions(diagram_id, version)
            if self._sharing.share(diagram_id, plan, directory, on_batch, relabel):
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
        hosting = Hosting() if sharing.is_host(diagram_id) else None
        deployment = Deployment(
            diagram_id,
            directory.version,
            plan,
            directory,
            on_batch,
            relabel,
            hosting=hosting,
            state=STARTING,
        )
        self._registry.register(deployment)
        try:
            self._forget_versions(left)
            directory.fix_start(self._launcher.input_heads(plan))
        except Exception as exc:
            self._registry.set_state(deployment, FAILED, f"{type(exc).__name__}: {exc}")
            raise
        with self._registry.launching:
            self._launcher.launch(deployment)
            self._sharing.launched(deployment)

    def _other_versions(self, diagram_id: str, version: str) -> list[checkpoints.DiagramDir]:
        return [old for old in self._diagrams.versions(diagram_id) if old.version != version]

    def _forget_versions(self, versions: list[checkpoints.DiagramDir]) -> None:
        """Remove a diagram's old versions; a host none of whose members is left goes too."""
        for old in versions:
            joined = old.membership()
            old.remove()
            if joined is not None:
                self._sharing.release(joined["key"])

    def _halt(self, deployment: Deployment, state: State, error: str | None = None) -> None:
        """A member leaves its host; any other deployment's queries stop."""
        if deployment.member is not None:
            self._sharing.leave(deployment, state, error)
        else:
            self._launcher.halt(deployment, state, error)

    def on_disk(self) -> list[str]:
        """The id of every diagram with checkpoints here: running, stopped or left over."""
        return sorted({d.diagram_id for d in self._diagrams.all()})

    def stop(self, diagram_id: str) -> None:
        """Stop a diagram's queries; its checkpoint stays, so ``deploy`` resumes where it was."""
        with self._registry.diagram_lock(diagram_id):
            deployment = self._registry.get(diagram_id)
            if deployment is not None and deployment.state != STOPPED:
                self._halt(deployment, STOPPED)
            if deployment is not None and deployment.member is not None:
                self._sharing.stop_idle_host(deployment.member.host)

    def remove(self, diagram_id: str) -> None:
        """Stop a diagram and forget it: checkpoints, results and its hold on the input logs
        (and a shared execution's host, if it was its last member)."""
        with self._registry.diagram_lock(diagram_id):
            self.stop(diagram_id)
            removed = self._registry.forget(diagram_id)
            versions = self._diagrams.versions(diagram_id)
            residuals = {r for directory in versions for r in directory.residuals()}
            for output in removed.plan.outputs if removed is not None else ():
                self.result_logs.forget(output)
                for residual in residuals:  # a prefix host's
                    self.result_logs.forget(overlap.log_name(output, residual))
            self._forget_versions(versions)
            self._diagrams.remove(diagram_id)

    # -- observing (status.py) -------------------------------------------------------------
    def status(self, diagram_id: str) -> dict[str, Any]:
        return self._view.status(diagram_id)

    def last_progress(self, diagram_id: str) -> dict[str, Mapping[str, Any] | None]:
        return self._view.last_progress(diagram_id)

    def given_up(self, diagram_id: str) -> bool:
        return self._view.given_up(diagram_id)

    def carry(self, diagram_id: str, plan: Plan, outputs: Iterable[str]) -> list[str]:
        """Before ``plan`` replaces a diagram's stopped version: give the version it will
        deploy under (``deploy``'s default) the checkpoints and result logs of ``outputs``, so
        their state (windows, joins) and result positions go on where they were. Which
        outputs may resume under a changed plan is the caller's judgement (Spark resumes a
        query whose stateless operators changed, not one whose stateful ones did). Returns
        those carried: none from a version still running, and of a shared execution's member
        only those its host logged for it alone (``SharedExecution.own_logs``)."""
        with self._registry.diagram_lock(diagram_id):
            current = self._registry.get(diagram_id)
            if current is None or current.state != STOPPED:
                return []
            version = version_of(self._diagrams, diagram_id, plan)
            if version == current.version:
                return [o for o in outputs if o in current.plan.outputs]
            target = self._diagrams.version(diagram_id, version)
            carried = []
            for output in outputs:
                source = self._own_logs(current, output)
                if source is not None:
                    target.adopt(output, *source, mode=current.directory.mode(output))
                    carried.append(output)
            return carried

    def _own_logs(self, deployment: Deployment, output: str) -> tuple[Location, Location] | None:
        """Where a stopped deployment's ``output`` keeps its checkpoint and results, if they
        are its own (``carry``)."""
        if output not in deployment.plan.outputs:
            return None
        if deployment.member is None:
            return deployment.directory.checkpoint(output), deployment.directory.results(output)
        return self._sharing.own_logs(deployment, output)

    def evaluate(self, plan: Plan, inputs: Mapping[str, pa.Table]) -> pa.Table:
        """``plan``'s one output computed once, as a batch job, over ``inputs`` (per input,
        rows as its source reads them): a box's data preview (``server.control.preview``)."""
        return self._launcher.evaluate(plan, inputs)

    def plan(self, diagram_id: str) -> Plan | None:
        return self._view.plan(diagram_id)

    def wait_for_state(
        self, diagram_id: str, state: str, restarts: int | None = None, timeout: float | None = None
    ) -> dict[str, Any] | None:
        return self._view.wait_for_state(diagram_id, state, restarts, timeout)

    def shared(self) -> list[dict[str, Any]]:
        return self._view.shared()

    def driver(self) -> dict[str, Any]:
        return self._view.driver()

    def realtime(self) -> dict[str, int]:
        return self._view.realtime()

    def listener_bus(self) -> dict[str, Any] | None:
        return self._view.listener_bus()

    def recent(self, output: str, n: int | None = None) -> pa.Table | None:
        return self._view.recent(output, n)

    def results(
        self, output: str, start: int, max_rows: int, asked: Asked | None = None
    ) -> Results:
        return self._view.results(output, start, max_rows, asked)

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
        while not self._supervisor.closed.wait(self.settings.compact_every):
            try:
                self.compact()
            except Exception:  # compaction is retried at the next round
                log.exception("ingestion log compaction failed")

    def close(self) -> None:
        """Stop every query (checkpoints stay), the log and, if this runtime made it, Spark."""
        self._supervisor.closed.set()
        for deployment in self._registry.all():
            with self._registry.diagram_lock(deployment.diagram_id):
                if deployment.state != STOPPED:
                    self._halt(deployment, STOPPED)
        for thread in self._threads:
            thread.join()
        self.delivery.close()
        self._launcher.heads.close()
        self._launcher.receiver.close()
        self.log.close()
        if self._supervisor.owns_session:
            self.spark.stop()
