"""The launcher: starts a deployment's Spark queries (one per output, each into its sink) and
stops them. It knows nothing of retries (``supervisor.py``) or sharing (``execution.py``).

Each output of a diagram is one streaming query (foreachBatch into an ``OutputSink``) with
its own checkpoint under the diagram's versioned directory. All of a diagram's input
streams that share a schema are read by one source instance; each derived input (another
output deployed here) by one of its own over that output's result log, whose retention waits
for every diagram reading it, as the ingestion log's compaction does.
"""

from __future__ import annotations

import functools
import json
import logging
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from boxes import codes, labels, observed
from boxes.compiler import compile_plan
from boxes.document import Plan
from boxes.errors import Conflict, NotFound, SluiceError, Unavailable
from boxes.input import InputBox
from boxes.onescan import real_time_sources
from boxes.punctuations.fields import FieldPolicy, field_policy
from boxes.scan import sources
from server.ingest import IngestLog
from server.ingest.segments import Position
from server.runtime import checkpoints, modes, overlap, realtime
from server.runtime.config import RuntimeSettings
from server.runtime.deployment import Deployment
from server.runtime.handover import narrowed
from server.runtime.heads import HeadServer, ResultLogs, result_key
from server.runtime.outputs import OutputSink
from server.runtime.registry import Registry
from server.runtime.source import derived_frame, input_scan
from server.runtime.spark import DRIVER_GONE
from server.runtime.sparktypes import Query
from server.runtime.states import FAILED, RUNNING, State
from server.runtime.storage import Location
from server.runtime.taps import DeliveryPool

if TYPE_CHECKING:  # PySpark is imported where Spark is started, not by every importer
    from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger(__name__)


class Launcher:
    """Starts and stops queries. ``spark`` is the session they run on (replaced, with the
    driver, by the supervisor)."""

    def __init__(
        self,
        spark: SparkSession,
        registry: Registry,
        ingest: IngestLog,
        result_logs: ResultLogs,
        diagrams: checkpoints.Diagrams,
        delivery: DeliveryPool,
        settings: RuntimeSettings,
    ) -> None:
        self.spark = spark
        self.registry = registry
        self.log = ingest
        self.result_logs = result_logs
        self.diagrams = diagrams
        self.delivery = delivery
        self.settings = settings
        self.heads = HeadServer(ingest, result_logs)
        self.receiver = realtime.Receiver()

    def evaluate(self, plan: Plan, inputs: Mapping[str, pa.Table]) -> pa.Table:
        """``plan``'s one output computed once, as a batch job over ``inputs``
        (``Runtime.evaluate``)."""
        frames = {name: self.spark.createDataFrame(table) for name, table in inputs.items()}
        (frame,) = compile_plan(plan, frames).values()
        return frame.toArrow()

    def launch(self, deployment: Deployment) -> None:
        """Start a starting deployment's queries (``launching`` held): running, or failed
        and the error raised."""
        try:
            self._start_queries(deployment, deployment.directory.start())
        except SluiceError as err:
            self.halt(deployment, FAILED, str(err))
            raise
        except Exception as exc:
            self.halt(deployment, FAILED, f"{type(exc).__name__}: {exc}")
            raise SluiceError(
                code=codes.DEPLOY_FAILED, diagram=deployment.diagram_id, reason=exc
            ) from exc
        self.registry.set_state(deployment, RUNNING)

    def halt(self, deployment: Deployment, state: State, error: str | None = None) -> None:
        """Stop a deployment's queries, close its sinks and cancel its retry, if any."""
        if deployment.retry is not None:
            deployment.retry.cancel()
            deployment.retry = None
        for query in deployment.queries.values():
            try:
                query.stop()
            except DRIVER_GONE:  # the driver is gone, and its queries with it
                log.warning("could not stop a query of %s", deployment.diagram_id, exc_info=True)
        for sink in deployment.sinks.values():
            self.receiver.forget(sink)
            sink.close()
        deployment.queries.clear()
        deployment.query_ids.clear()
        deployment.sinks.clear()
        deployment.modes.clear()
        if deployment.hosting is not None:
            deployment.hosting.dispatcher = None
        self.registry.set_state(deployment, state, error)

    def input_heads(self, plan: Plan) -> dict[str, Position]:
        """Where each of a plan's inputs ends now: its streams' logs and the result logs of
        the outputs it reads (keyed ``result_key``), as ``start.json`` records them."""
        derived = [result_key(o) for o in plan.derived().values()]
        return self.log.heads(list(plan.streams())) | self.result_logs.heads(derived)

    def check_inputs(self, plan: Plan) -> None:
        for output in plan.derived().values():
            if self.result_logs.directory(output) is None:
                raise Conflict(code=codes.DERIVED_NOT_DEPLOYED, output=output)
        streams = self.log.schemas()
        for name in plan.streams():
            if name not in streams:
                raise NotFound(details={"stream": name}, what="input stream", name=name)
            if streams[name] != plan.input_schemas[name]:
                raise Conflict(code=codes.SCHEMA_MISMATCH, details={"stream": name}, name=name)

    def _start_queries(self, deployment: Deployment, start: dict[str, Position] | None) -> None:
        """Start every output's query, then wait until each query's sources (those its own
        inputs need: ``sources_opened``) have said hello to the head service (``heads.py``):
        the query's stream thread is running. A deploy whose
        sources have not all said hello within ``deploy_timeout`` is abandoned."""
        assert start is not None, f"{deployment.diagram_id} has no start: fix_start first"
        client = f"{deployment.diagram_id}/{deployment.version}/{uuid.uuid4().hex}"
        plan = deployment.plan
        policy = field_policy(plan) if plan.governed else None
        # The tuples a query at a level may see, for its quiet streams' marks (``source.py``).
        level = plan.clearance
        clearance = {} if level is None else {"clearance": str(level)}
        deployment.modes = self.decide_modes(deployment)
        in_batches = sources(plan)
        compiled = self._compiled(deployment, start, client, policy, clearance, in_batches)
        read: dict[str, list[list[str]]] = dict.fromkeys(plan.outputs, in_batches)
        in_real_time: dict[str, DataFrame] = {}
        joined = {
            o: checkpoints.settle_union_source(deployment.directory.checkpoint(o))
            for o, mode in deployment.modes.items()
            if mode.mode == modes.REAL_TIME
        }
        for together in set(joined.values()):  # both only while an old checkpoint runs
            streams = real_time_sources(plan, together)
            frames = self._compiled(deployment, start, client, policy, clearance, streams, True)
            outputs = [o for o, j in joined.items() if j == together]
            in_real_time |= {o: frames[o] for o in outputs}
            read |= dict.fromkeys(outputs, streams)
        for output, frame in compiled.items():
            checkpoint = deployment.directory.checkpoint(output)
            checkpoints.discard_partial_writes(checkpoint)
            if deployment.modes[output].mode == modes.REAL_TIME:
                query = self._start_real_time(deployment, output, in_real_time[output], client)
            elif overlap.is_prefix_host(deployment.diagram_id):
                query = self._start(
                    frame, deployment, output, self._dispatcher(deployment, output).handle
                )
            else:
                location = deployment.directory.results(output)
                sink = self.output_sink(deployment, output, location, output)
                query = self._start(frame, deployment, output, sink.handle)
            deployment.queries[output] = query
            deployment.query_ids[output] = query.id
        queries = list(deployment.queries.values())
        came_up = self.heads.wait_for_clients(
            client,
            sources_opened(plan, read),
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

    def _compiled(
        self,
        deployment: Deployment,
        start: dict[str, Position],
        client: str,
        policy: FieldPolicy | None,
        clearance: dict[str, str],
        streams: list[list[str]],
        real_time: bool = False,
    ) -> dict[str, DataFrame]:
        """Each output's frame over the deployment's sources, ``streams`` read by a source
        each: all of a schema's streams (``scan.sources``), or in real-time mode
        (``RealTimeLogStream.java``) those ``onescan.real_time_sources`` gives. A union of one
        source's streams is read as one scan where it may (``boxes/onescan.py``) and, in
        micro-batches, the output's checkpoint allows (``checkpoints.settle_one_scan``; a
        real-time query's sources say it: ``checkpoints.settle_union_source``)."""
        extra = clearance | ({"realtime": "true"} if real_time else {})
        frames: dict[str, DataFrame] = {}
        scans = []
        for names in streams:
            schema = deployment.plan.input_schemas[names[0]]
            options = {
                "root": str(self.log.root),
                "heads": self.heads.address,
                "poll": str(self.settings.poll_seconds),
                "idle": str(self.settings.idle_seconds),
                "client": client,
                "start": json.dumps({n: start[n].to_list() for n in names}),
                **extra,
            }
            scans.append(input_scan(self.spark, options, names, schema, policy))
            frames.update(scans[-1].frames())
        frames.update(self._derived_frames(deployment.plan, start, client, policy, extra))
        plan, metrics, directory = deployment.plan, self.settings.box_metrics, deployment.directory
        scanned = (
            set(plan.outputs)
            if real_time
            else {o for o in plan.outputs if checkpoints.settle_one_scan(directory.checkpoint(o))}
        )
        one = compile_plan(plan, frames, metrics, scans) if scanned else {}
        branched = compile_plan(plan, frames, metrics) if len(scanned) < len(plan.outputs) else {}
        return {o: (one if o in scanned else branched)[o] for o in plan.outputs}

    def _start(self, frame: DataFrame, deployment: Deployment, output: str, handle) -> Query:
        """A micro-batch query: ``handle`` (an ``OutputSink``'s, or a prefix host's split)
        takes each batch."""
        checkpoint = deployment.directory.checkpoint(output)
        return (
            narrowed(frame, len(deployment.plan.label_sources))
            .writeStream.foreachBatch(handle)
            .option("checkpointLocation", checkpoint.hadoop_url)
            .queryName(f"{deployment.diagram_id}.{output}")
            .start()
        )

    def _start_real_time(
        self, deployment: Deployment, output: str, frame: DataFrame, client: str
    ) -> Query:
        """A real-time query: its rows to the receiver, which logs them and hands them on
        (``realtime.py``)."""
        checkpoint = deployment.directory.checkpoint(output)
        sink = self.output_sink(deployment, output, deployment.directory.results(output), output)
        sink.acked = functools.partial(self._acked_now, deployment.plan)
        taker = realtime.RealTimeOutput(sink, realtime.arrow_schema(frame))
        name = f"{client}/{output}"
        self.receiver.register(name, taker)
        return realtime.start_query(
            frame,
            self.receiver,
            name,
            checkpoint.hadoop_url,
            f"{self.settings.realtime_batch_seconds} seconds",
            f"{deployment.diagram_id}.{output}",
        )

    def realtime_budget(self) -> int:
        """The task slots real-time queries may hold, all told (``modes.py``)."""
        budget = self.settings.realtime_slots
        if budget is None:
            return modes.default_budget(self.spark.sparkContext.defaultParallelism)
        return budget

    def realtime_in_use(self, leaving_out: Deployment | None = None) -> int:
        """The slots deployments' real-time queries hold now (but ``leaving_out``'s)."""
        return sum(
            mode.slots
            for other in self.registry.all()
            if other is not leaving_out
            for mode in list(other.modes.values())
        )

    def decide_modes(self, deployment: Deployment) -> dict[str, modes.Mode]:
        """Each output's mode (``modes.py``), with the slots other deployments' real-time
        queries hold now (launches are one at a time: ``Registry.launching``)."""
        directory, plan = deployment.directory, deployment.plan
        kept = {o: modes.Mode(**m) for o in plan.outputs if (m := directory.mode(o)) is not None}
        decided = modes.decide(plan, self.realtime_budget(), self.realtime_in_use(deployment), kept)
        for output, mode in decided.items():
            if plan.realtime and output not in kept:
                directory.keep_mode(output, mode.stored())
        return decided

    def output_sink(
        self, deployment: Deployment, name: str, location: Location, output: str
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
        if deployment.hosting is not None:
            deployment.hosting.start_ends[name] = sink.end()
        if deployment.on_batch is not None:
            sink.tap(deployment.on_batch, self.delivery, self.settings.tap_queue)
        return sink

    def _dispatcher(self, deployment: Deployment, output: str) -> overlap.Dispatcher:
        """A prefix host's split of ``output``'s batches, for every residual it has kept."""
        assert deployment.hosting is not None, f"{deployment.diagram_id} is not a host"
        schema = deployment.plan.outputs[output]
        dispatcher = overlap.Dispatcher(
            self.spark.sparkContext.defaultParallelism, schema.names, self.settings.box_metrics
        )
        deployment.hosting.dispatcher = dispatcher
        for name, stored in sorted(deployment.directory.residuals().items()):
            residual = overlap.Residual.load(stored, schema)
            location = deployment.directory.residual_results(name)
            dispatcher.add(
                residual,
                self.output_sink(deployment, overlap.log_name(output, name), location, output),
            )
        return dispatcher

    def _derived_frames(
        self,
        plan: Plan,
        start: dict[str, Position],
        client: str,
        policy: FieldPolicy | None,
        clearance: dict[str, str],
    ) -> dict[str, DataFrame]:
        """One DataFrame per derived input: its output's result log, from where this diagram
        started reading it (its key in ``start``)."""
        frames = {}
        for box in plan.boxes:
            if isinstance(box, InputBox) and box.output is not None:
                key = result_key(box.output)
                options = {
                    "root": str(self.log.root),
                    "heads": self.heads.address,
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
        if location is None:  # removed since ``check_inputs``
            raise Conflict(code=codes.DERIVED_NOT_DEPLOYED, output=output)
        return location.url

    def _claimed(self, output: str) -> int | None:
        """The first row of an output's result log that some diagram reading it (running or
        stopped; through a member's output if shared) has not yet consumed; None if none
        reads it."""
        keys = self.result_logs.keys(output)
        claims = [
            seq
            for directory in self.diagrams.all()
            for key in keys
            if (seq := directory.claims().get(key)) is not None
        ]
        return min(claims, default=None)

    def _acked_now(self, plan: Plan, group: int) -> float | None:
        """When the newest append to a real-time output's streams was acknowledged: its
        group's rows were read before it was logged, so its newest input is at most that."""
        heads = self.log.heads(list(plan.streams()))
        return max(
            (t for name, head in heads.items() if (t := self.log.acked_at(name, head.seq))),
            default=None,
        )

    def _acked(self, checkpoint: Location, batch_id: int) -> float | None:
        """When the newest input row of an output's batch was acknowledged: the latest
        acknowledgement among the log heads the batch read up to (Spark's offsets for it)."""
        ends = checkpoints.batch_offsets(checkpoint, batch_id) or {}
        return max(
            (t for name, seq in ends.items() if (t := self.log.acked_at(name, seq)) is not None),
            default=None,
        )


def sources_opened(plan: Plan, read: Mapping[str, Sequence[Sequence[str]]]) -> int:
    """How many sources the plan's queries open, all told. Each output's query opens those
    of the frames its boxes read (``modes.sources_of``), its streams read as ``read[output]``
    says; nothing for another output's inputs."""
    return sum(
        modes.sources_of(plan, boxes, read[o]) for o, boxes in observed.lineages(plan).items()
    )
