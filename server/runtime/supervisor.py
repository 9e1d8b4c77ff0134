"""The supervisor: finds failed queries, restarts their diagrams with backoff, stops a diagram
whose state outgrows its limit, and replaces a Spark driver that is gone.

Failures are found by asking the queries themselves (``isActive``, ``exception()``), every
``reconcile_every`` seconds and on every ``status`` call, never by a ``StreamingQueryListener``:
Spark drops listener events when its bus is busy, and a lost termination event would leave a
dead diagram "running" forever. A PySpark listener would also take every progress event over
py4j. A failed output marks its diagram ``failed`` (with the error's one telling line) and
stops that diagram's other outputs; other diagrams carry on.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from boxes import codes, observed
from boxes.errors import Conflict, SluiceError, Unavailable
from server.runtime.config import RuntimeSettings
from server.runtime.deployment import Deployment
from server.runtime.launcher import Launcher
from server.runtime.registry import Registry
from server.runtime.spark import DRIVER_GONE, build_session, discard_session, driver_alive
from server.runtime.sparktypes import Query, java_session, jvm
from server.runtime.states import FAILED, RUNNING, STARTING

log = logging.getLogger(__name__)


class Supervisor:
    """Runs the reconciler thread. ``launched(deployment)``: called once a restarted
    deployment runs again (its waiting members join it, ``execution.py``)."""

    def __init__(
        self,
        registry: Registry,
        launcher: Launcher,
        settings: RuntimeSettings,
        launched: Callable[[Deployment], None],
        owns_session: bool,
        spark_master: str,
        spark_conf: Mapping[str, str] | None,
        py_files: tuple[Path, ...],
    ) -> None:
        self.registry, self.launcher, self.settings = registry, launcher, settings
        self._launched = launched
        self.owns_session = owns_session
        self._spark_master, self._spark_conf, self._py_files = spark_master, spark_conf, py_files
        self.driver_restarts = 0
        self.max_state_rows: int | None = None  # none until the server sets its ceiling
        self._awaiting_driver: set[str] = set()  # failed with the driver, resumed by the next
        self.closed = threading.Event()

    def awaits_driver(self, diagram_id: str) -> bool:
        with self.registry.lock:
            return diagram_id in self._awaiting_driver

    def _look(self, deployments: list[Deployment]) -> dict[str, int]:
        """Per query of the running ``deployments``, by id: -1 if it is no longer active,
        else the rows its state stores held as of its last batch. One call into the JVM
        (``java/.../QueryWatch.java``) for all of them."""
        ids = [i for d in deployments if d.state == RUNNING for i in d.query_ids.values()]
        if not ids:
            return {}
        spark = self.launcher.spark
        watch = jvm(spark).sluice.source.QueryWatch
        answer = watch.look(java_session(spark), ",".join(ids))
        return dict(zip(ids, map(int, answer.split(",")), strict=True))

    def check(self, deployment: Deployment, looked: dict[str, int] | None = None) -> None:
        """Fail a running diagram one of whose queries has ended, however Spark's listener
        bus fared; ``looked``: what ``_look`` found (looked up now if not given). Idempotent:
        only a ``running`` diagram's current queries are looked at, and failing stops and
        forgets them, so a second look (another thread, the next round) finds nothing to
        do."""
        with self.registry.diagram_lock(deployment.diagram_id):
            if self.registry.get(deployment.diagram_id) is not deployment:
                return
            if deployment.state != RUNNING or deployment.member is not None:
                return
            ids = deployment.query_ids.values()
            if looked is None or any(looked.get(i, -1) < 0 for i in ids):
                # Looked at now, under the diagram's lock: a query started since the round's
                # look, or one that looked ended may have been restarted since (same id).
                looked = self._look([deployment])
            for output, query in list(deployment.queries.items()):
                if looked[deployment.query_ids[output]] < 0:
                    deployment.failed_output = output
                    self.launcher.halt(deployment, FAILED, _ended(output, query))
                    log.error("diagram %s failed: %s", deployment.diagram_id, deployment.error)
                    self._retry_later(deployment)
                    return
            self._check_state(deployment, sum(looked[i] for i in ids))
            self._fold(deployment)

    def _fold(self, deployment: Deployment) -> None:
        """Add the box counts of each output's batches that ran since the last fold. Each
        output's counts are read only for the boxes it stands for (``observed.reader``)."""
        if not self.settings.box_metrics:
            return
        readers = observed.reader(deployment.plan)
        counts = deployment.counts
        for output, query in list(deployment.queries.items()):
            batches, newest = _new_batches(
                query, counts.folded.get(output, -1), counts.looked.get(output, "")
            )
            counts.looked[output] = newest
            for batch in batches:
                counted = observed.counts(batch["observedMetrics"])
                mine = {box: n for box, n in counted.items() if readers.get(box) == output}
                with self.registry.lock:
                    for box, n in mine.items():
                        counts.rows[box] = counts.rows.get(box, 0) + n
                    counts.batch_rows.update(mine)
                    counts.folded[output] = batch["batchId"]

    def _check_state(self, deployment: Deployment, rows: int) -> None:
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
            self.launcher.halt(deployment, FAILED, str(error))
            log.error("diagram %s stopped: %s", deployment.diagram_id, deployment.error)

    def run(self) -> None:
        """The reconciler thread: every ``reconcile_every`` seconds, check every diagram."""
        while not self.closed.wait(self.settings.reconcile_every):
            if not driver_alive(self.launcher.spark):
                self.replace_driver()
                continue
            deployments = [d for d in self.registry.all() if d.member is None]
            try:
                looked = self._look(deployments)
            except DRIVER_GONE:  # the next round finds out whether the driver is gone
                continue
            for deployment in deployments:
                busy = self.registry.diagram_lock(deployment.diagram_id)
                if not busy.acquire(blocking=False):
                    continue  # being deployed, stopped or checked: the next round looks again
                try:
                    self.check(deployment, looked)
                except Exception:  # Spark unreachable for a moment: the next round looks again
                    log.exception("checking diagram %s failed", deployment.diagram_id)
                finally:
                    busy.release()

    def replace_driver(self) -> None:
        """The Spark driver is gone (killed, or exited on running out of memory): fail every
        diagram it ran, start a new driver and resume each from its checkpoint. Nothing
        acknowledged is lost, since the ingestion log lives in this process, not in Spark.
        A driver this runtime did not start (a session handed in) is not its to replace."""
        error = str(Unavailable(code=codes.SPARK_DRIVER_LOST))
        replaced = self.owns_session and not self.closed.is_set()
        resume = []
        for deployment in self.registry.all():
            if deployment.member is not None:
                continue  # a member: its host's state is its own
            with self.registry.diagram_lock(deployment.diagram_id):
                if deployment.state in (RUNNING, STARTING) or deployment.retry is not None:
                    if replaced:  # not given up: resumed once a new driver is up
                        with self.registry.lock:
                            self._awaiting_driver.add(deployment.diagram_id)
                    self.launcher.halt(deployment, FAILED, error)
                    resume.append(deployment)
        log.error("the Spark driver is gone; %d diagram(s) stopped with it", len(resume))
        if not replaced:
            return
        with self.registry.launching:
            discard_session(self.launcher.spark)
            self.launcher.spark = build_session(
                self._spark_master, self._spark_conf, py_files=self._py_files
            )
            self.driver_restarts += 1
        log.warning("a new Spark driver is up; resuming %d diagram(s)", len(resume))
        for deployment in resume:
            self._resume(deployment)

    def _resume(self, deployment: Deployment) -> None:
        """Start a failed diagram again from its checkpoint, or retry later if it fails."""
        with self.registry.diagram_lock(deployment.diagram_id):
            with self.registry.lock:
                self._awaiting_driver.discard(deployment.diagram_id)
            if (
                self.registry.get(deployment.diagram_id) is not deployment
                or deployment.state != FAILED
                or self.closed.is_set()
            ):
                return
            deployment.retry = None
            self.registry.set_state(deployment, STARTING, deployment.error)
            try:
                with self.registry.launching:
                    self.launcher.launch(deployment)
                    self._launched(deployment)
            except SluiceError:
                self._retry_later(deployment)

    def _retry_later(self, deployment: Deployment) -> None:
        """Restart a failed diagram from its checkpoint a few times, since a failure may be
        passing (e.g. a driver busy past a deploy's time limit)."""
        with self.registry.changed:
            if (
                deployment.retry is None
                and not self.closed.is_set()
                and deployment.restarts < self.settings.max_restarts
            ):
                delay = self.settings.restart_backoff * 2**deployment.restarts
                deployment.restarts += 1
                deployment.retry = threading.Timer(delay, self._resume, args=(deployment,))
                deployment.retry.daemon = True
                deployment.retry.start()
                self.registry.changed.notify_all()


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


def _ended(output: str, query: Query) -> str:
    """Why an output's query ended: its error's telling line, or that something stopped it."""
    error = query.exception()
    if error is None:
        return f"output {output!r} stopped unexpectedly"
    return _summary(str(error))


def _new_batches(query: Query, after: int, looked: str) -> tuple[list[dict[str, Any]], str]:
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
