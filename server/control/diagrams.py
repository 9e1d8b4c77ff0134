"""From a stored diagram to a running query, and back; shared by the REST API and start-up.

A diagram's document is validated again at every deploy, against the catalog's schemas of its
inputs, so a document stored by an older server is never run unchecked. Deployed outputs are
registered with the delivery path together with their label layout (source stream -> source
index), which is how each subscriber's readable set becomes a mask over that output's labels.
A derived input's tuples keep their source streams' bits (``Plan.label_sources``), so the
reading diagram's outputs are filtered by the rights on those streams, whoever owns it.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

from boxes import codes, cost, cql
from boxes.cql.compiler import compile_script
from boxes.document import Plan, load_document, validate
from boxes.errors import Denied, DiagramInvalid, InvalidInput, Problem, SluiceError, Unavailable
from boxes.input import Derived, InputBox
from boxes.output import OutputBox
from boxes.rewrite.xmlquery import query_document
from boxes.sources import Labels
from boxes.types import Schema, parse_schema
from catalog import DiagramSpec, ObjectType, Subject
from catalog.authorizer import playing
from catalog.objects import Resumable
from catalog.punctuations import role_words_of
from catalog.snapshot import Snapshot
from server.control.lease import RuntimeLease, holder_name
from server.control.relabel import relabeller
from server.control.rewrites import deployed_plan, key_of
from server.ingest.here import here

MAX_DOCUMENT_NODES = 100_000
log = logging.getLogger(__name__)


def _bounded(doc: Any) -> Any:
    """Refuse documents that expand hugely (YAML aliases nested into a "billion laughs")."""
    stack, seen = [doc], 0
    while stack:
        node = stack.pop()
        seen += 1
        if seen > MAX_DOCUMENT_NODES:
            raise InvalidInput(code=codes.DOCUMENT_TOO_LARGE, limit=MAX_DOCUMENT_NODES)
        if isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    try:
        json.dumps(doc)
    except (TypeError, ValueError):
        raise InvalidInput(
            "the document holds values JSON cannot carry (YAML dates or tags); write them as text",
            code=codes.DOCUMENT_SYNTAX,
        ) from None
    return doc


def document_of(raw: Any) -> dict:
    """A document sent as YAML/JSON text or as a JSON object."""
    return _bounded(load_document(raw) if isinstance(raw, str) else raw)


def _schema(stored: dict, name: str) -> Schema:
    """A stream's schema as the catalog stores it: checked when it was created."""
    schema, problems = parse_schema(stored, name)
    assert schema is not None, problems
    return schema


def plan_of(
    doc: Mapping,
    schemas: Mapping[str, dict],
    derived: Mapping[str, Derived] | None,
    catalog,
    snapshot: Snapshot | None = None,
) -> Plan:
    """The document's plan over the catalog's streams, outputs and companies as they are now
    (in ``snapshot`` if given; a level literal takes their bits, as the plan's ``level:``
    does in ``resolved``)."""
    streams = {name: _schema(schema, name) for name, schema in schemas.items()}
    levels = (catalog.core.snapshot if snapshot is None else snapshot).levels
    return validate(doc, streams, derived, lattice=levels.lattice)


def affordable(plan: Plan, ceilings: Mapping[str, float]) -> Plan:
    """``plan`` if its estimated cost is within the ceilings in force, else every excess as
    a problem of the document (Spark never sees a diagram over them)."""
    problems = cost.over(cost.estimate(plan), ceilings)
    if problems:
        raise DiagramInvalid(problems)
    return plan


def plan_for(
    catalog, subject: Subject, doc: Mapping, ceilings: Mapping[str, float] | None = None
) -> Plan:
    """Validate against the input streams the session may view (unseen ones look missing),
    the catalog's companies (a ``level:``) and the cost ``ceilings`` (the server passes those
    in force; tests and benchmarks may not)."""
    inputs = doc.get("inputs") if isinstance(doc, Mapping) else None
    names = list(inputs) if isinstance(inputs, Mapping) else []
    outputs = [
        spec["output"]
        for spec in (inputs.values() if isinstance(inputs, Mapping) else ())
        if isinstance(spec, Mapping) and isinstance(spec.get("output"), str)
    ]
    schemas = catalog.objects.stream_schemas(subject, names)
    derived = catalog.objects.derived_outputs(subject, outputs)
    plan = resolved(plan_of(doc, schemas, derived, catalog), catalog)
    return plan if ceilings is None else affordable(plan, ceilings)


def planned(
    catalog, subject: Subject, body: Mapping, ceilings: Mapping[str, float] | None = None
) -> tuple[dict, Plan]:
    """The document a request sends (``document``, or ``cql`` or the paper's XML query form
    ``xml``, with an optional ``name``) and its plan. CQL is compiled against the streams and
    other diagrams' outputs the session may view (``FROM`` an output reads it as a derived
    input), and every problem, of the CQL or of the document it compiles to, is located at its
    CQL line and column; the XML form against the streams the session may view."""
    if "xml" in body:
        doc = query_document(
            body["xml"], lambda names: _schemas(catalog, subject, names), body.get("name")
        )
        return doc, plan_for(catalog, subject, doc, ceilings)
    if "cql" not in body:
        doc = document_of(body["document"])
        return doc, plan_for(catalog, subject, doc, ceilings)
    script = cql.parse(body["cql"])
    names = sorted({s.stream for q in script.queries for sel in q.selects for s in sel.sources})
    schemas = _schemas(catalog, subject, names)
    outputs = catalog.objects.derived_outputs(subject, [n for n in names if n not in schemas])
    classes = [name for name, _ in catalog.core.snapshot.levels.lattice.classes]
    compiled = compile_script(
        script, schemas, body.get("name"), classes, {n: d.schema for n, d in outputs.items()}
    )
    try:
        return compiled.document, plan_for(catalog, subject, compiled.document, ceilings)
    except DiagramInvalid as err:
        raise cql.relocate(err, compiled) from None


def _schemas(catalog, subject: Subject, names) -> dict[str, Schema]:
    """The schemas of those input streams of ``names`` the session may view."""
    return {
        name: schema
        for name, raw in catalog.objects.stream_schemas(subject, names).items()
        if (schema := parse_schema(raw, name)[0]) is not None
    }


def resolved(plan: Plan, catalog, role_words: int | None = None) -> Plan:
    """A plan at a level with its clearance (company bits) from the catalog's lattice; a
    class or company the catalog lacks is a problem of the document at ``level``. A plan one
    of whose source streams sps govern is ``governed`` (a stream's governance cannot change
    while a diagram reads it: ``catalog.punctuations``), with room in its labels for
    ``role_words`` words of roles (None: the roles the catalog has now); only such a plan may
    relabel its results (``on_result``)."""
    snapshot = catalog.core.snapshot
    streams = (snapshot.find(ObjectType.STREAM, name) for name in plan.label_sources)
    if any(s is not None and s.id in snapshot.governed for s in streams):
        words = role_words or role_words_of(snapshot)
        plan = dataclasses.replace(plan, governed=True, role_words=words)
    relabelled = [b.name for b in plan.boxes if isinstance(b, OutputBox) and b.on_result]
    if relabelled and not plan.governed:
        code = codes.ON_RESULT_UNGOVERNED
        raise DiagramInvalid(
            [Problem(code, f"outputs.{o}.on_result", code.render(output=o)) for o in relabelled]
        )
    if plan.level is None:
        return plan
    try:
        mask = snapshot.levels.mask_of(plan.level)
    except InvalidInput as err:
        raise DiagramInvalid([Problem(err.code, "level", err.message)]) from None
    return dataclasses.replace(plan, clearance=mask)


def check_clearance(catalog, subject: Subject, plan: Plan) -> None:
    """Deploying a diagram at a level needs the deployer's clearance (its active roles', as
    they are now) to dominate that level; a refusal is audited."""
    if plan.clearance is None:
        return
    snapshot = catalog.core.snapshot
    policy = snapshot.levels
    catalog.core.valid(subject, snapshot)
    clearance = policy.clearance(playing(subject, snapshot))
    decision = policy.dominates(clearance, plan.clearance)
    if decision.allowed:
        return
    catalog.core.log(subject, "deploy", f"diagram:{plan.name}", False, decision.reason)
    raise Denied(
        code=codes.LEVEL_NOT_DOMINATED,
        diagram=plan.name,
        level=json.dumps(dict(plan.level or {}), ensure_ascii=False),
    )


def spec_of(plan: Plan, doc: Mapping) -> DiagramSpec:
    boxes = tuple(b.name for b in plan.boxes if not isinstance(b, (InputBox, OutputBox)))
    return DiagramSpec(
        plan.name,
        plan.streams(),
        boxes,
        tuple(plan.outputs),
        document=doc,
        cost=cost.cost_of(plan),
        derived=tuple(sorted(set(plan.derived().values()))),
    )


def run(
    svc,
    resumable: Resumable,
    deployer: Subject | None = None,
    keep_variants: bool = False,
    checked: Callable[[Plan], None] | None = None,
) -> None:
    """Start one running diagram's query and route its outputs to the delivery path; a
    ``deployer`` (not a restart) must be cleared for the diagram's level. A diagram reading a
    stream some policy protects runs rewritten for its deployer (``rewrites``), and a reader
    whose policies rewrite it differently reads a variant (``variants``), which a deploy ends
    and a swap of its deployer's rewrite keeps (``keep_variants``, ``rewrites.swap``).
    ``checked`` is handed the plan to run once every check has passed and before any of it
    starts (a replacement stops the version it replaces there: ``lifecycle.replace``)."""
    if resumable.problem is not None:
        raise resumable.problem
    doc = resumable.diagram.document
    diagram = resumable.diagram
    # a restart keeps the role words it was deployed with (its checkpoint's label layout)
    recorded = None if deployer is not None else svc.catalog.punctuations.role_words(diagram)
    plan = resolved(
        plan_of(doc, resumable.schemas, resumable.derived, svc.catalog),
        svc.catalog,
        role_words=None if deployer is not None else recorded or 1,
    )
    affordable(plan, svc.limits.cost_ceilings())  # the ceilings may have been lowered since
    if deployer is not None:
        check_clearance(svc.catalog, deployer, plan)
        if plan.governed:
            svc.catalog.punctuations.record_role_words(diagram, plan.role_words)
    elif plan.governed and role_words_of(svc.catalog.core.snapshot) > plan.role_words:
        log.warning(
            "diagram %s resumes with room for %d roles' bits: roles made since with higher bits"
            " read none of its results until it is deployed again",
            diagram.name,
            plan.role_words * 64,
        )
    running = deployed_plan(svc.catalog, diagram, doc, plan, deployer)
    if running is not plan:
        affordable_rewrite(svc, diagram, running, deployer)
    stored = svc.catalog.rewrites.of(diagram) if running is not plan else None
    running = resumable.keyed(running)
    if checked is not None:
        checked(running)
    if not keep_variants:
        svc.variants.end(diagram.name)  # deployed again: its readers are routed afresh
    reader = svc.variants.gate(resumable, doc, plan, stored.document) if stored else None
    svc.delivery.register(
        running.outputs,
        Labels.of(running, resumable.sources),
        running.semantics(),
        reader,
        rewrite=key_of(stored.document) if stored else None,
    )
    batches = svc.relay.deliver if svc.relay is not None else svc.delivery.on_batch
    relabel = relabeller(svc.catalog, diagram.name, running)
    here(svc).needed().deploy(diagram.name, running, batches, relabel=relabel)


def affordable_rewrite(svc, diagram, running: Plan, deployer: Subject | None) -> None:
    """A rewrite may widen windows and join bounds (a policy's minimum window), so the plan
    that runs is held to the ceilings and, at a deploy, to the deployer's role limits too; a
    refused rewrite is not left recorded as the diagram's. The filters and projections the
    rewrite adds are the policies' doing, not the deployer's: only the document's own box
    types need USE (checked when the deploy was admitted)."""
    try:
        affordable(running, svc.limits.cost_ceilings())
        if deployer is not None:
            measures = cost.Cost(measures=cost.estimate(running))
            snapshot = svc.catalog.core.snapshot
            svc.catalog.operators.admit(deployer, snapshot, diagram.name, measures, "deploy")
    except SluiceError:
        if deployer is not None:
            svc.catalog.rewrites.forget(diagram)
        raise


def status_of(runtime, diagram) -> str:
    """A diagram's status as every answer shows it: the one its owner set (``running`` or
    ``stopped``: what a restarted server resumes), but ``failed`` while it is to run and the
    runtime has given up on it (``Runtime.given_up``: a failure after its automatic restarts,
    or one not retried), until it is deployed or stopped again. ``runtime``: this server's
    (``here(svc).runtime``), None without one."""
    if diagram.status == "running" and runtime is not None and runtime.given_up(diagram.name):
        return "failed"
    return diagram.status


def run_named(
    svc, name: str, deployer: Subject | None = None, checked: Callable[[Plan], None] | None = None
) -> None:
    (found,) = [r for r in svc.catalog.objects.resumable() if r.diagram.name == name]
    run(svc, found, deployer, checked=checked)


def open_logs(svc) -> None:
    """Make sure every catalog input stream has its ingestion log (creating one is idempotent)."""
    runtime = here(svc).needed()
    for name, schema in svc.catalog.objects.input_streams().items():
        runtime.create_stream(name, _schema(schema, name))


def keep_runtime(svc) -> None:
    """Run the runtime while this server holds the catalog's runtime lease: now, if it is
    free or this server's, else once its holder stops renewing it (``server.control.lease``)."""
    svc.lease = RuntimeLease(
        svc.catalog,
        holder_name(svc.data_dir.path),
        svc.settings.runtime_lease_seconds,
        gained=lambda: start_runtime(svc),
        lost=lambda: stop_runtime(svc),
        address=svc.settings.advertised_url,
    )
    try:
        held = svc.lease.begin()
    except BaseException:
        svc.lease.stop()
        svc.lease.release()
        raise
    if not held:
        log.warning("another server runs the runtime: this one waits to take it over")


def stop_runtime(svc) -> None:
    """This server no longer holds the runtime lease: its subscriptions end (their clients
    subscribe again, through the new holder), its queries stop where their checkpoints are."""
    runtime, svc.runtime = svc.runtime, None
    svc.delivery.end_all(Unavailable(code=codes.RUNTIME_UNAVAILABLE))
    if runtime is not None:
        runtime.close()


def start_runtime(svc, runtime=None) -> None:
    """Start Spark and the ingestion logs (or adopt ``runtime``), open a log for every input
    stream, then start every diagram the catalog records as running."""
    if runtime is None:
        from server.runtime import Runtime

        runtime = Runtime.start(svc.settings)
    svc.runtime = runtime
    svc.limits.follow(lambda values: runtime.set_max_tuples(values["max_batch_tuples"]))
    svc.limits.follow(lambda values: runtime.set_max_state_rows(values["max_state_rows"]))
    open_logs(svc)
    svc.variants.clear_left_over(runtime)
    for resumable in svc.catalog.objects.resumable():
        try:
            run(svc, resumable)
        except SluiceError:
            log.exception("diagram %s could not be resumed", resumable.diagram.name)
