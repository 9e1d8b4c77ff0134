"""What the runtime tells of its diagrams: state, progress, shared executions and results, as
read from the registry. Nothing here changes a deployment, but a status has the supervisor
check the diagram's queries first (``Supervisor.check``), so it is true at the call."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from boxes import observed
from boxes.document import Plan
from boxes.errors import NotFound
from server.runtime import overlap, sharing
from server.runtime.config import RuntimeSettings
from server.runtime.deployment import Deployment
from server.runtime.outputs import Asked, OutputSink, Results
from server.runtime.registry import Registry
from server.runtime.spark import DRIVER_GONE, driver_alive, driver_pid
from server.runtime.sparktypes import java_context
from server.runtime.states import FAILED, RUNNING, STARTING, STOPPED
from server.runtime.supervisor import Supervisor

log = logging.getLogger(__name__)
CHECK_WAIT = 5.0  # seconds a status waits for another caller's check of the same diagram


class StatusView:
    def __init__(
        self, registry: Registry, supervisor: Supervisor, settings: RuntimeSettings
    ) -> None:
        self.registry, self.supervisor, self.settings = registry, supervisor, settings

    def status(self, diagram_id: str) -> dict[str, Any]:
        """State (``starting``/``running``/``stopped``/``failed`` + error) and per-output
        progress, checked against the queries themselves at the call. A status never waits for a
        deploy or restart (it answers ``starting``), and at most ``CHECK_WAIT`` for a stop or
        another caller's check of the same diagram."""
        deployment = self.registry.get(diagram_id)
        if deployment is None:
            return {
                "diagram": diagram_id,
                "state": STOPPED.value,
                "error": None,
                "failed_output": None,
                "outputs": {},
                "boxes": {},
            }
        if deployment.member is not None:
            return self._member_status(deployment)
        busy = self.registry.diagram_lock(diagram_id)
        # A check in progress takes a moment: wait for its verdict. A deploy or restart may
        # take minutes: answer with what is known.
        wait = 0 if deployment.state == STARTING else CHECK_WAIT
        if busy.acquire(timeout=wait):
            try:
                self.supervisor.check(deployment)
            except DRIVER_GONE:  # the driver is gone: the reconciler replaces it
                log.warning("checking diagram %s failed", diagram_id, exc_info=True)
            finally:
                busy.release()
        progress: dict[str, Mapping[str, Any] | None] = {}
        for name, query in list(deployment.queries.items()):
            try:
                progress[name] = query.lastProgress
            except DRIVER_GONE:  # the driver is gone: the reconciler replaces it
                progress[name] = None
        shown = {name: mode.shown() for name, mode in list(deployment.modes.items())}
        outputs = {
            name: _progress(progress.get(name, progress.get(overlap.fed_by(name))), sink.stats())
            | shown.get(name, shown.get(overlap.fed_by(name), {}))
            for name, sink in list(deployment.sinks.items())
            if name in progress or overlap.fed_by(name) in progress
        }
        counts = deployment.counts
        with self.registry.lock:
            rows, batch_rows = dict(counts.rows), dict(counts.batch_rows)
        boxes = observed.per_box(deployment.plan, rows) if self.settings.box_metrics else {}
        for name, newest in observed.per_box(deployment.plan, batch_rows).items():
            if name in boxes:
                boxes[name] |= {f"batch_{k}": n for k, n in newest.items()}
        return {
            "diagram": diagram_id,
            "version": deployment.version,
            "state": deployment.state.value,
            "error": deployment.error,
            "failed_output": deployment.failed_output,
            "restarts": deployment.restarts,
            "outputs": outputs,
            "boxes": boxes,
        }

    def _member_status(self, member: Deployment) -> dict[str, Any]:
        """A member's status: its host's, checked now, in the member's names and positions."""
        m = member.member
        assert m is not None
        host = self.registry.get(m.host)
        answer = self.status(m.host)
        by_host = {name: output for output, name in m.hosted.items()}
        # a split member's log is fed by the host's output, which is what fails
        by_fed = {overlap.fed_by(n): o for n, o in by_host.items()} if m.residual else {}
        failed = answer["failed_output"]
        outputs = {}
        for name, progress in answer["outputs"].items():
            output = by_host.get(name)
            if output is None:  # another member's filters' log (``overlap.py``)
                continue
            sink = host.sinks.get(name) if host is not None else None
            if sink is not None and member.state == RUNNING and m.bases:
                shown = sharing.SharedOutput(output, sink, m.bases[output]).stats()
                taps = [tap.stats() for tap in [m.taps.get(output)] if tap is not None]
                outputs[output] = {
                    **progress,
                    **shown,
                    "subscribers": taps,
                    "dropped_batches": sum(t["dropped_batches"] for t in taps),
                    "dropped_rows": sum(t["dropped_rows"] for t in taps),
                }
        boxes = host.plan.boxes if host is not None else ()
        mine = m.shared.boxes
        names = {h.name: b.name for h, b in zip(boxes, mine, strict=False)}
        counted = {names[box]: rows for box, rows in answer["boxes"].items() if box in names}
        if m.residual is not None:  # the host's output counts the prefix's rows: the
            # member's filters, map and output have the rows its residual's split counted
            (output,) = member.plan.outputs
            counted.pop(output, None)
            split = _split(host)
            residual_counts = split.counts(m.residual.name) if split is not None else None
            if residual_counts is not None:  # a runtime that counts rows per box
                counted |= residual_counts.per_box(m.residual, output)
                # the prefix's box the residual reads: its rows out are the residual's rows
                # in, since the member joined, not the host's since the host started
                (fed,) = next(b for b in m.shared.boxes if b.name == output).upstream
                if fed in counted:
                    counted[fed] |= residual_counts.rows_into()
        return {
            **answer,
            "diagram": member.diagram_id,
            "version": member.version,
            "state": member.state.value,
            "error": member.error,
            "failed_output": by_host.get(failed, by_fed.get(failed)),
            "outputs": outputs,
            "boxes": counted,
        }

    def last_progress(self, diagram_id: str) -> dict[str, Mapping[str, Any] | None]:
        """Per output, Spark's last progress report of the query that computes it (a member's:
        its host's), unfiltered and unchecked: the offsets each source read up to, what the
        backlog is measured from (``server/control/metrics.py``). Empty when not deployed."""
        deployment = self.registry.get(diagram_id)
        if deployment is None:
            return {}
        runs: Deployment | None = deployment
        by_output = {o: o for o in deployment.plan.outputs}
        if deployment.member is not None:
            runs = self.registry.get(deployment.member.host)
            by_output = deployment.member.hosted
        if runs is None:
            return {}
        answer: dict[str, Mapping[str, Any] | None] = {}
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
        with self.registry.lock:
            deployment = self.registry.get(diagram_id)
            if deployment is None or deployment.state != FAILED:
                return False
            host = deployment.member.host if deployment.member is not None else ""
            runs = self.registry.get(host) or deployment
            return runs.retry is None and not self.supervisor.awaits_driver(runs.diagram_id)

    def plan(self, diagram_id: str) -> Plan | None:
        """The plan a diagram was last deployed with (None if it never was here)."""
        deployment = self.registry.get(diagram_id)
        return None if deployment is None else deployment.plan

    def wait_for_state(
        self, diagram_id: str, state: str, restarts: int | None = None, timeout: float | None = None
    ) -> dict[str, Any] | None:
        """Wait until a diagram is in ``state`` (after ``restarts`` automatic restarts, if given)
        and return ``{state, error, restarts}`` as they were then; None after ``timeout``.
        Its queries are not checked here: this is what the runtime's own threads found."""

        def reached() -> bool:
            deployment = self.registry.get(diagram_id)
            return (
                deployment is not None
                and deployment.state == state
                and restarts in (None, deployment.restarts)
            )

        with self.registry.changed:
            if not self.registry.changed.wait_for(reached, timeout):
                return None
            deployment = self.registry.get(diagram_id)
            assert deployment is not None
            return {
                "state": deployment.state.value,
                "error": deployment.error,
                "restarts": deployment.restarts,
            }

    def shared(self) -> list[dict[str, Any]]:
        """Every shared execution with a member deployed since the runtime started: its key,
        its host's state, and per member its state and, per output, the host position it
        joined at (what an administrator sees: which diagrams share what). A host that runs
        a prefix (``overlap.py``) says so, and how many conditions all its members' filters
        have in common (evaluated once); each of its members, its own filters and, if a map
        ends its plan, the map's fields."""
        with self.registry.lock:
            groups: dict[str, list[Deployment]] = {}
            for deployment in self.registry.all():
                if deployment.member is not None:
                    groups.setdefault(deployment.member.host, []).append(deployment)
            return [
                {
                    "key": host_id.removeprefix(sharing.HOST),
                    "state": (host.state if host is not None else STOPPED).value,
                    "shares": "prefix" if overlap.is_prefix_host(host_id) else "plan",
                    **(
                        {"common_conditions": split.common()}
                        if (split := _split(host)) is not None
                        else {}
                    ),
                    "members": [_member(d) for d in sorted(members, key=lambda d: d.diagram_id)],
                }
                for host_id, members in sorted(groups.items())
                for host in (self.registry.get(host_id),)
            ]

    def sink(self, output: str) -> OutputSink | sharing.SharedOutput:
        """A running output's results: its sink, or a member's view of its host's."""
        with self.registry.lock:
            for deployment in self.registry.all():
                if output in deployment.sinks:
                    return deployment.sinks[output]
                m = deployment.member
                if deployment.state == RUNNING and m and m.bases and output in m.bases:
                    host = self.registry.get(m.host)
                    sink = host.sinks.get(m.hosted[output]) if host else None
                    if sink is not None:
                        return sharing.SharedOutput(output, sink, m.bases[output])
        raise NotFound(details={"output": output}, what="running output", name=output)

    def recent(self, output: str, n: int | None = None) -> pa.Table | None:
        """The last ``n`` result tuples of a running output (None if it has none or is not
        running)."""
        try:
            return self.sink(output).recent(n)
        except NotFound:
            return None

    def results(
        self, output: str, start: int, max_rows: int, asked: Asked | None = None
    ) -> Results:
        """A running output's results from row position ``start`` (see ``OutputSink.read_from``)."""
        return self.sink(output).read_from(start, max_rows, asked)

    def driver(self) -> dict[str, Any]:
        """The Spark driver: its process (if this runtime launched it), whether it answers, and
        how often it was replaced."""
        spark = self.supervisor.launcher.spark
        return {
            "pid": driver_pid(spark),
            "alive": driver_alive(spark),
            "restarts": self.supervisor.driver_restarts,
        }

    def realtime(self) -> dict[str, int]:
        """Real-time mode's task slots (``modes.py``): how many its queries may hold, and hold."""
        launcher = self.supervisor.launcher
        return {"slots": launcher.realtime_budget(), "in_use": launcher.realtime_in_use()}

    def listener_bus(self) -> dict[str, Any] | None:
        """Spark's listener-bus counters: events posted, and events each queue dropped because
        a listener was too slow (``streams`` carries query events). None if Spark does not
        expose them (e.g. a Spark Connect session)."""
        try:
            counters = (
                java_context(self.supervisor.launcher.spark)
                .sc()
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


def _split(host: Deployment | None) -> overlap.Dispatcher | None:
    """A prefix host's split of its batches, while it runs."""
    return host.hosting.dispatcher if host is not None and host.hosting is not None else None


def _member(deployment: Deployment) -> dict[str, Any]:
    m = deployment.member
    assert m is not None
    return {
        "diagram": deployment.diagram_id,
        "state": deployment.state.value,
        "joined_at": m.bases,
        **({"filters": list(m.residual.texts)} if m.residual else {}),
        **({"fields": dict(m.residual.fields)} if m.residual and m.residual.fields else {}),
    }


def _state_rows(progress: Mapping[str, Any] | None) -> int:
    """Rows held by a query's state stores (windows, join buffers), as of its last batch."""
    return sum(op.get("numRowsTotal", 0) for op in (progress or {}).get("stateOperators", []))


# Where a micro-batch's time goes, as Spark's progress names it: asking the sources for their
# ends, planning, reading the batch, running it (the sink included), and the two logs' writes.
PHASES = ("latestOffset", "queryPlanning", "getBatch", "addBatch", "walCommit", "commitOffsets")


def _phases(progress: Mapping[str, Any]) -> dict[str, int]:
    """The last batch's time by phase, in milliseconds (those Spark reported)."""
    durations = progress.get("durationMs") or {}
    return {phase: durations[phase] for phase in PHASES if phase in durations}


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
        "batch_phases_ms": _phases(progress),
        **delivered,
    }
