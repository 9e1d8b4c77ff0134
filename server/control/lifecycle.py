"""What a diagram's owner asks for, each carried out whole or not at all: create (and deploy,
if asked, in the same catalog transaction), deploy, stop, replace (a new version, swapped in
while it runs) and drop.

Each function changes the catalog, the rewrite variants and the runtime in one order and,
where a later step fails, undoes the earlier ones in one place, so the views that call them
only parse, authorize and shape the answer. A replacement is validated before anything
changes; a running diagram's new version then takes over output by output, keeping the
state and result positions of the outputs whose stateful part is unchanged (``swap``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from boxes import codes
from boxes.document import Plan
from boxes.errors import InvalidInput
from catalog import CatalogObject, ObjectType, Subject
from server.control.diagrams import check_clearance, plan_for, planned, run_named, spec_of
from server.control.swap import Swap, dropping, judged
from server.ingest.here import here

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Replaced:
    """The new version's catalog objects and, if it replaced a running version, what of
    that one's state its outputs kept (``swap.Swap.to_dict``)."""

    objects: list[CatalogObject]
    swap: dict[str, Any] | None = None


@contextmanager
def _undone_on_failure(undo):
    """Run ``undo`` if the block fails, then let the failure through."""
    try:
        yield
    except BaseException:
        try:
            undo()
        except Exception:
            log.exception("undoing a failed change failed too")
        raise


def create(
    svc, subject: Subject, body: Mapping[str, Any], deploy: bool = False
) -> list[CatalogObject]:
    """Add the diagram ``body`` sends (as ``planned`` reads it, owned by its ``role``); with
    ``deploy``, recorded to run in the same transaction and started, as ``deploy`` starts
    one (a runtime must be there first; if it cannot start, it stays, recorded stopped)."""
    if deploy:
        here(svc).needed()
    doc, plan = planned(svc.catalog, subject, body, svc.limits.cost_ceilings())
    created = svc.catalog.objects.add_diagram(
        subject, spec_of(plan, doc), body.get("role"), running=deploy
    )
    if deploy:
        _started(svc, subject, created[0])
    return created


def deploy(svc, subject: Subject, name: str) -> CatalogObject:
    """Record that the diagram is to run and start it; if it cannot start, it is recorded
    stopped again."""
    here(svc).needed()
    diagram = svc.catalog.objects.set_query_status(subject, name, "running")
    _started(svc, subject, diagram)
    return diagram


def _started(svc, subject: Subject, diagram: CatalogObject) -> None:
    """Start a diagram recorded to run; if it cannot start, record it stopped again."""
    name = diagram.public
    with _undone_on_failure(lambda: svc.catalog.objects.set_query_status(subject, name, "stopped")):
        run_named(svc, diagram.name, subject)


def stop(svc, subject: Subject, name: str) -> CatalogObject:
    """Record that the diagram is stopped, end its variants and stop its queries (their
    checkpoints stay, so a deploy resumes it)."""
    runtime = here(svc).unless_standby()
    diagram = svc.catalog.objects.set_query_status(subject, name, "stopped")
    svc.variants.end(diagram.name)
    if runtime is not None:
        runtime.stop(diagram.name)
    return diagram


def drop(svc, subject: Subject, name: str) -> None:
    """Drop the diagram from the catalog, then what ran of it: variants, queries, state."""
    runtime = here(svc).unless_standby()
    key = svc.catalog.objects.drop(subject, ObjectType.DIAGRAM, name).name
    svc.variants.end(key)
    if runtime is not None:
        runtime.remove(key)


def replace(svc, subject: Subject, name: str, body: Mapping[str, Any]) -> Replaced:
    """Replace the diagram's document with the one ``body`` sends (as ``planned`` reads it).

    Nothing changes unless the new version is valid and affordable and, for a running
    diagram, its deployer is cleared for its level. A stopped diagram's old state goes (its
    next deploy starts afresh). A running one keeps running: its new version is stored
    running, then started in place of the old one, each output resuming from the old one's
    checkpoint where ``swap`` allows; if the new version cannot start, the old one is stored
    and started again."""
    doc, plan = planned(svc.catalog, subject, {"name": name, **body}, svc.limits.cost_ceilings())
    if doc.get("name") != name:
        raise InvalidInput(code=codes.NAME_CHANGED, name=name)
    old = svc.catalog.objects.get(subject, ObjectType.DIAGRAM, name)
    now = here(svc)
    stopped_on = now.unless_standby()  # a standby refuses before anything changes
    if old.status != "running":
        objects = svc.catalog.objects.replace_diagram(subject, spec_of(plan, doc))
        svc.variants.end(old.name)
        if stopped_on is not None:
            stopped_on.remove(old.name)
        return Replaced(objects)
    check_clearance(svc.catalog, subject, plan)
    runtime = now.needed()
    before = runtime.plan(old.name)
    objects = svc.catalog.objects.replace_diagram(subject, spec_of(plan, doc))
    outcome: list[Swap] = []

    def take_over(running: Plan) -> None:
        """Every check of the new version passed: stop the old one, hand on its state."""
        svc.variants.end(old.name)
        runtime.stop(old.name)
        swap = judged(before, running) if before is not None else Swap(new=list(running.outputs))
        outcome.append(dropping(swap, runtime.carry(old.name, running, swap.kept)))

    with _undone_on_failure(lambda: _restore(svc, subject, old)):
        run_named(svc, old.name, subject, checked=take_over)
    public = {key: output for output, key in _keys(svc, objects[0]).items()}
    return Replaced(objects, outcome[0].to_dict(public) if outcome else None)


def _restore(svc, subject: Subject, old: CatalogObject) -> None:
    """The new version did not start: store the old one again and run it (from its own
    checkpoints, which stay until a new version has started)."""
    doc = old.document
    restored = svc.catalog.objects.replace_diagram(
        subject, spec_of(plan_for(svc.catalog, subject, doc), doc)
    )
    run_named(svc, restored[0].name, subject)


def _keys(svc, diagram: CatalogObject) -> Mapping[str, str]:
    """The keys of the outputs whose key is not their public name (``Resumable.keys``)."""
    return svc.catalog.objects.resumable_of(diagram).keys
