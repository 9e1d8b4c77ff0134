"""Per-reader variants of a rewritten diagram (docs/rewrite.md, "Who may read a rewritten output").

A reader whose policies rewrite a running diagram differently from its deployer's reads a
*variant*: the diagram's stored document rewritten for that reader, run by the runtime as an
internal diagram (``DIAGRAM.v-KEY``, outputs ``OUTPUT.v-KEY``; no catalog name holds a ``.``)
keyed by the fingerprint of the rewritten document, so readers with the same rewrite share
it. Delivery routes each subscription to the runtime output it reads and sends its tuples
under the public name, through the same SecFilter. A diagram runs at most
``max_rewrite_variants`` variants; one lives while it has subscribers, then lingers a while
for a reader that reconnects; stopping, replacing or redeploying the diagram ends them all.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Mapping

from boxes import codes
from boxes.document import Plan
from boxes.errors import Conflict, SluiceError
from boxes.output import OutputBox
from boxes.rewrite import Rewritten
from boxes.sources import Labels
from catalog import ObjectType, Subject
from catalog.names import public_of
from catalog.objects import Resumable
from server.control.relabel import relabeller
from server.control.rewrites import key_of, reader_rewrite
from server.ingest.here import here

log = logging.getLogger(__name__)
MARK = ".v-"  # between a diagram's or output's name and a variant's key

Gate = Callable[[Subject, str, bool], str]  # (reader, output, may start a variant) -> route


def renamed(plan: Plan, suffix: str) -> Plan:
    """``plan`` with every output renamed ``NAME + suffix`` (nothing inside reads an output)."""
    boxes = tuple(
        dataclasses.replace(b, name=b.name + suffix) if isinstance(b, OutputBox) else b
        for b in plan.boxes
    )
    outputs = {name + suffix: schema for name, schema in plan.outputs.items()}
    return dataclasses.replace(plan, boxes=boxes, outputs=outputs)


@dataclasses.dataclass
class Variant:
    diagram: str
    key: str
    runtime_id: str
    outputs: dict[str, str]  # public output -> the variant's
    joined: float = dataclasses.field(default_factory=time.monotonic)  # the last subscribe


class Variants:
    """The variants running in this server; every method is safe from any thread."""

    def __init__(self, svc) -> None:
        self.svc = svc
        self._running: dict[tuple[str, str], Variant] = {}
        self.linger = svc.settings.variant_linger_seconds  # after the last subscriber left
        # held while a variant starts (a deploy: seconds), so one rewrite starts one variant
        self._lock = threading.RLock()
        svc.delivery.on_leave = self.left

    def gate(self, resumable: Resumable, doc: Mapping, plan: Plan, document: Mapping) -> Gate:
        """Delivery's gate for a diagram deployed rewritten as ``document``: a reader with the
        same rewrite reads the output itself, another its variant (started if allowed)."""
        name = resumable.diagram.public

        def route(subject: Subject, output: str, start: bool) -> str:
            mine = reader_rewrite(self.svc.catalog, name, doc, plan, document, subject)
            if mine is None:
                return output
            return self._variant(resumable, mine, output, start).outputs[output]

        return route

    def _variant(self, resumable: Resumable, mine: Rewritten, output: str, start: bool) -> Variant:
        name, shown = resumable.diagram.name, resumable.diagram.public
        key = key_of(mine.document)
        with self._lock:
            found = self._running.get((name, key))
            if found is not None:
                if start:
                    found.joined = time.monotonic()
                return found
            if not start:
                raise Conflict(code=codes.REWRITE_VARIANT_NOT_RUNNING, diagram=shown, output=output)
            current = self.svc.catalog.core.snapshot.find(ObjectType.DIAGRAM, name)
            if (
                current is None
                or current.status != "running"
                or current.spec != resumable.diagram.spec
            ):  # a gate outlives its diagram's stop or replacement: no variant of that
                raise Conflict(code=codes.VARIANT_ENDED, diagram=shown)
            limit = self.svc.limits.max_rewrite_variants
            if sum(1 for diagram, _ in self._running if diagram == name) >= limit:
                raise Conflict(
                    code=codes.REWRITE_VARIANTS_FULL,
                    details={"diagram": shown, "limit": limit},
                    diagram=shown,
                    limit=limit,
                )
            variant = self._start(resumable, mine, key)
            self._running[(name, key)] = variant
            return variant

    def _start(self, resumable: Resumable, mine: Rewritten, key: str) -> Variant:
        from server.control.diagrams import affordable  # diagrams builds this module's gates

        name, suffix = resumable.diagram.name, MARK + key
        keyed = resumable.keyed(mine.plan)
        plan = affordable(renamed(keyed, suffix), self.svc.limits.cost_ceilings())
        variant = Variant(name, key, name + suffix, {o: o + suffix for o in keyed.outputs})
        delivery, runtime = self.svc.delivery, here(self.svc).needed()
        public = {ours: output for output, ours in variant.outputs.items()}
        labels = Labels.of(plan, resumable.sources)
        delivery.register(plan.outputs, labels, plan.semantics(), None, public, rewrite=key)
        try:
            relabel = relabeller(self.svc.catalog, name, plan)
            runtime.deploy(variant.runtime_id, plan, delivery.on_batch, relabel=relabel)
        except Exception:  # nothing of a variant that did not start is left behind
            runtime.remove(variant.runtime_id)
            delivery.unregister(plan.outputs)
            raise
        log.info("variant %s of %s started", variant.runtime_id, name)
        return variant

    def _stop(self, variant: Variant) -> None:
        """Stop a variant and delete its checkpoints and result log (the lock held)."""
        self._running.pop((variant.diagram, variant.key), None)
        runtime = here(self.svc).runtime
        if runtime is not None:
            runtime.remove(variant.runtime_id)
        self.svc.delivery.unregister(variant.outputs.values())
        log.info("variant %s of %s stopped", variant.runtime_id, variant.diagram)

    def _readers(self, variant: Variant) -> int:
        return sum(self.svc.delivery.readers(route) for route in variant.outputs.values())

    def end(self, diagram: str, err: SluiceError | None = None) -> None:
        """Stop every variant of ``diagram``, telling their subscribers why (by default: the
        diagram was stopped, replaced or deployed again, VARIANT_ENDED)."""
        err = err or Conflict(code=codes.VARIANT_ENDED, diagram=public_of(diagram))
        with self._lock:
            for variant in [v for v in self._running.values() if v.diagram == diagram]:
                for output, route in variant.outputs.items():
                    self.svc.delivery.end(output, err, route)
                self._stop(variant)

    def prune(self, since: float) -> None:
        """Stop at once every variant no subscription reads (after a re-check that began at
        ``since``, ``time.monotonic()``), but those a subscribe started or joined since."""
        with self._lock:
            for variant in list(self._running.values()):
                if variant.joined < since and not self._readers(variant):
                    self._stop(variant)

    def left(self, route: str) -> None:
        """A subscription of ``route`` ended: if no other reads its variant when the linger
        is over (and none joined since), the variant stops. Takes no lock: it is called from
        delivery threads that a stopping variant waits for."""
        timer = threading.Timer(self.linger, self._expire, (route, time.monotonic()))
        timer.daemon = True
        timer.start()

    def _expire(self, route: str, left_at: float) -> None:
        with self._lock:
            for variant in [v for v in self._running.values() if route in v.outputs.values()]:
                if variant.joined > left_at or self._readers(variant):
                    continue  # a subscriber came back meanwhile
                try:
                    self._stop(variant)
                except Exception:
                    log.exception("variant %s could not be stopped", variant.runtime_id)

    def running(self, diagram: str) -> list[str]:
        """The runtime ids of ``diagram``'s variants."""
        with self._lock:
            return sorted(v.runtime_id for v in self._running.values() if v.diagram == diagram)

    def clear_left_over(self, runtime) -> None:
        """At start: delete the variants a previous run left on disk (they do not survive a
        restart; their readers subscribe again)."""
        for diagram_id in runtime.on_disk():
            if MARK in diagram_id:
                runtime.remove(diagram_id)
