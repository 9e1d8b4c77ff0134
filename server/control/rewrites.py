"""Access-control policies at deploy, at subscribe and after a change (docs/rewrite.md).

A diagram that reads a *protected* stream (one some policy names) runs rewritten
(``boxes.rewrite``) under the policies of its deployer's active roles and the deployer's
attributes, and every input must then be authorized (the paper's whitelist). Its results are
what the deployer may see, so a subscriber whose own rewrite differs reads a variant run
for its rewrite (``variants.py``); the label SecFilter applies on top for everyone. After
a change of policies or attributes every running diagram is rewritten again for its
deployer: one whose rewrite differs runs under the new one in place of the old; one its
deployer may no longer run (denied now, gone, disabled, a role lost) or that now reads a
protected stream unrewritten is stopped and marked (REWRITE_STALE, audited), and its
subscribers are told. Every subscriber left is routed again, and moved to the route its
own policies give now.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Mapping

from boxes import codes
from boxes.document import Plan
from boxes.errors import Conflict, Denied, SluiceError
from boxes.rewrite import Rewritten, rewrite
from catalog import Action, ObjectType, Subject
from catalog.authorizer import decide
from catalog.objects import Resumable
from catalog.policies import protected, rewrite_subject
from catalog.snapshot import Snapshot
from server.ingest.here import here

log = logging.getLogger(__name__)


def rewrite_for(
    snapshot: Snapshot, user_id: int, roles: frozenset[str], doc: Mapping, plan: Plan
) -> Rewritten | None:
    """The diagram rewritten for a user playing ``roles``; None when it reads no protected
    stream (OxRBAC and labels alone govern it). REWRITE_DENIED names an unauthorized input."""
    if not protected(snapshot) & set(plan.inputs):
        return None
    user = snapshot.users.get(user_id)
    playing = roles & user.roles if user is not None else frozenset()  # not a role taken away
    subject = rewrite_subject(snapshot, user_id, playing)
    return rewrite(doc, plan, snapshot.policies, subject)


def audited_rewrite(
    catalog,
    subject: Subject,
    event: str,
    name: str,
    doc: Mapping,
    plan: Plan,
    snapshot: Snapshot | None = None,
) -> Rewritten | None:
    """``rewrite_for`` the subject's session (in ``snapshot`` if given), its refusal
    (REWRITE_DENIED) audited as ``event`` on diagram ``name``."""
    snapshot = catalog.core.snapshot if snapshot is None else snapshot
    try:
        return rewrite_for(snapshot, subject.user_id, subject.roles, doc, plan)
    except SluiceError as err:
        catalog.core.log(subject, event, f"diagram:{name}", False, err.message)
        raise


def deployed_plan(catalog, diagram, doc: Mapping, plan: Plan, deployer: Subject | None) -> Plan:
    """The plan to run: rewritten for ``deployer`` (recorded for the editor and for
    subscribers), or, at a restart, for the recorded deployer, which must give the recorded
    rewrite (otherwise REWRITE_STALE: the diagram is stopped)."""
    snapshot = catalog.core.snapshot
    if deployer is not None:
        done = audited_rewrite(catalog, deployer, "deploy", diagram.public, doc, plan)
        if done is None:
            catalog.rewrites.forget(diagram)
            return plan
        catalog.rewrites.record(deployer, diagram, done.document, list(done.added))
        return done.plan
    reason, changed = rechecked(catalog, snapshot, diagram, doc, plan)
    if reason is not None:
        catalog.rewrites.mark_stale(diagram, reason, None)
        raise Conflict(code=codes.REWRITE_STALE, diagram=diagram.name, reason=reason)
    if changed is not None:  # a change made while the server was down
        catalog.rewrites.swap(diagram, changed.document, list(changed.added), None)
        return changed.plan
    stored = catalog.rewrites.of(diagram)
    if stored is None:
        return plan
    user = snapshot.users_by_name[stored.deployer]
    done = rewrite_for(snapshot, user.id, stored.roles, doc, plan)
    assert done is not None, "rechecked found it unchanged"
    return done.plan


def rechecked(
    catalog, snapshot: Snapshot, diagram, doc: Mapping, plan: Plan
) -> tuple[str | None, Rewritten | None]:
    """Whether the diagram's recorded rewrite is still what its deployer's rewrite is now:
    ``(reason, None)`` if it must stop (its deployer gone, disabled, no longer playing a
    recorded role or denied now; a stream newly protected), ``(None, rewritten)`` if the
    deployer's policies or attributes now rewrite it into another document, which it is to
    run instead, ``(None, None)`` if it is unchanged (or neither rewritten nor protected)."""
    stored = catalog.rewrites.of(diagram)
    if stored is None:
        if protected(snapshot) & set(plan.inputs):
            return "it now reads a stream a policy protects", None
        return None, None
    user = snapshot.users_by_name.get(stored.deployer)
    if user is None or not user.enabled:
        return f"its deployer {stored.deployer!r} is gone or disabled", None
    if not stored.roles <= user.roles:
        lost = ", ".join(sorted(stored.roles - user.roles))
        return f"its deployer {stored.deployer!r} no longer plays {lost}", None
    try:
        done = rewrite_for(snapshot, user.id, stored.roles, doc, plan)
    except SluiceError as err:
        return err.message, None
    if done is None:
        return "it reads no protected stream any more", None
    return None, (done if done.document != stored.document else None)


def reader_rewrite(
    catalog, name: str, doc: Mapping, plan: Plan, document: Mapping, subject: Subject
) -> Rewritten | None:
    """A reader's own rewrite of diagram ``name`` (deployed rewritten as ``document``): None
    when it is the deployed one, else the reader's (its variant, ``variants.py``). A reader
    its policies deny is refused with that denial (REWRITE_DENIED), one the policies would not
    rewrite at all with REWRITE_MISMATCH; both audited."""
    mine = own_rewrite(catalog, name, doc, plan, subject)
    return None if mine.document == document else mine


def own_rewrite(
    catalog,
    name: str,
    doc: Mapping,
    plan: Plan,
    subject: Subject,
    snapshot: Snapshot | None = None,
) -> Rewritten:
    """``subject``'s rewrite of diagram ``name``, which runs rewritten (in ``snapshot`` if
    given): refused as ``reader_rewrite`` says."""
    mine = audited_rewrite(catalog, subject, "subscribe", name, doc, plan, snapshot)
    if mine is None:
        reason = "it would not be rewritten"
        catalog.core.log(subject, "subscribe", f"diagram:{name}", False, reason)
        raise Denied(code=codes.REWRITE_MISMATCH, diagram=name, reason=reason)
    return mine


def key_of(document: Mapping) -> str:
    """The fingerprint of a rewritten document: equal documents share a variant, and a
    relayed batch names the rewrite it was computed under by it (``reads_as_deployed``)."""
    text = json.dumps(document, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def rewrite_key(catalog, output: str) -> str | None:
    """The fingerprint of the rewrite ``output``'s diagram runs under now (None: none)."""
    diagram = _diagram_of(catalog, output)
    stored = None if diagram is None else catalog.rewrites.of(diagram)
    return None if stored is None else key_of(stored.document)


def readers_rewrite(
    catalog, subject: Subject, output: str, snapshot: Snapshot | None = None
) -> Rewritten:
    """``subject``'s own rewrite of the diagram ``output`` belongs to, which runs rewritten
    (every read in ``snapshot`` if given); refused as ``reader_rewrite`` refuses (and
    REWRITE_CHANGED for an output gone)."""
    snapshot = catalog.core.snapshot if snapshot is None else snapshot
    diagram = _diagram_of(catalog, output, snapshot)
    if diagram is None:
        raise Conflict(code=codes.REWRITE_CHANGED, output=output)
    plan = _plan(catalog.objects.resumable_of(diagram, snapshot), catalog, snapshot)
    spec = diagram.document
    return own_rewrite(catalog, diagram.public, spec, plan, subject, snapshot)


def reads_rewritten(catalog, subject: Subject, output: str, key: str, snapshot: Snapshot) -> None:
    """Refuse ``subject`` the results of ``output`` computed under the rewrite whose
    fingerprint is ``key`` unless its own policies in ``snapshot`` (a batch's) rewrite the
    output's diagram into that same document (else REWRITE_CHANGED: a reader whose rewrite
    differs reads its own variant's); refusals as ``reader_rewrite``'s."""
    if key_of(readers_rewrite(catalog, subject, output, snapshot).document) != key:
        raise Conflict(code=codes.REWRITE_CHANGED, output=output)


def _diagram_of(catalog, output: str, snapshot: Snapshot | None = None):
    """The diagram an output belongs to, as the catalog has it now (or in ``snapshot``;
    None: no such output)."""
    snapshot = catalog.core.snapshot if snapshot is None else snapshot
    found = snapshot.find(ObjectType.OUTPUT, output)
    return None if found is None or found.parent_id is None else snapshot.objects[found.parent_id]


def revalidate(svc, by: Subject) -> list[str]:
    """After a change of policies, attributes or a user's roles: run every running diagram
    whose deployer's rewrite changed under the new one (``swap``), stop those that must stop
    (``rechecked``; or that cannot be checked, or whose new rewrite cannot run), and route
    the subscribers of the others again. Returns the stopped ones."""
    catalog = svc.catalog
    snapshot = catalog.core.snapshot
    began, stopped = time.monotonic(), []
    for resumable in catalog.objects.resumable():
        diagram = resumable.diagram
        doc = diagram.document
        try:
            plan = _plan(resumable, catalog)
            outputs = list(resumable.keyed(plan).outputs)
            reason, changed = rechecked(catalog, snapshot, diagram, doc, plan)
        except SluiceError as err:  # unchecked is not left running
            reason, changed, outputs = f"it cannot be checked: {err.message}", None, []
        if changed is not None:
            try:
                swap(svc, resumable, changed, by)
            except SluiceError as err:
                reason = f"its deployer's new rewrite cannot run: {err.message}"
        if reason is None:
            for output in outputs:
                svc.delivery.recheck(output)
            continue
        ended = Conflict(code=codes.REWRITE_STALE, diagram=diagram.public, reason=reason)
        svc.variants.end(diagram.name, ended)
        runtime = here(svc).runtime
        if runtime is not None:
            runtime.stop(diagram.name)
        catalog.rewrites.mark_stale(diagram, reason, by)
        for output in outputs:
            svc.delivery.end(output, ended)
        stopped.append(diagram.name)
    svc.variants.prune(began)  # a variant the re-check left without subscribers
    return stopped


def swap(svc, resumable: Resumable, changed: Rewritten, by: Subject) -> None:
    """Run the diagram under its deployer's new rewrite ``changed``: recorded, deployed in
    place of the old one (the ceilings in force apply), its readers' subscriptions kept to
    be routed again (``Delivery.recheck``) and its variants kept, since a variant is a
    function of the stored document and its readers' policies only."""
    from server.control.diagrams import run  # diagrams imports this module

    diagram = resumable.diagram
    for output in resumable.keyed(changed.plan).outputs:
        svc.delivery.park(output)  # none reads the new rewrite before it is routed to it
    svc.catalog.rewrites.swap(diagram, changed.document, list(changed.added), by)
    run(svc, resumable, keep_variants=True)
    log.info("diagram %s runs under its deployer's new rewrite", diagram.name)


def _plan(resumable: Resumable, catalog, snapshot: Snapshot | None = None) -> Plan:
    from server.control.diagrams import plan_of  # diagrams imports this module

    if resumable.problem is not None:
        raise resumable.problem
    spec = resumable.diagram.document
    return plan_of(spec, resumable.schemas, resumable.derived, catalog, snapshot)


def described(catalog, subject: Subject, obj) -> dict:
    """The ``rewrite`` part of a diagram's description, if it was deployed rewritten; the
    predicates (which carry the deployer's attributes) for the deployer and administrators."""
    if obj.type is not ObjectType.DIAGRAM:
        return {}
    stored = catalog.rewrites.of(obj)
    if stored is None:
        return {}
    snapshot = catalog.core.snapshot
    system = snapshot.system
    admin = system is not None and decide(subject, Action.CHANGE_SYSTEM, system, snapshot).allowed
    return {"rewrite": stored.to_dict(full=admin or stored.deployer == subject.user_name)}
