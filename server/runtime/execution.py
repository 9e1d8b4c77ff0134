"""Shared execution at run time: diagrams whose plans are alike (``sharing.py``), or alike up
to a prefix (``overlap.py``), deployed as members of one host that runs the queries.

A host is an ordinary deployment (id ``sharing.HOST`` + key) started through the runtime's
public ``deploy`` (``Core``), whose tap fans its batches out to its members; a member
(``deployment.Membership``) runs no query of its own. This layer sits on the registry and
the launcher and is called by the runtime; it never reaches back into how queries start.
"""

from __future__ import annotations

import functools
import logging
from typing import Protocol

import pyarrow as pa

from boxes.document import Plan
from boxes.errors import SluiceError
from server.runtime import checkpoints, overlap, sharing
from server.runtime.config import RuntimeSettings
from server.runtime.deployment import Deployment, Membership
from server.runtime.heads import ResultLogs
from server.runtime.launcher import Launcher
from server.runtime.outputs import NEXT_KEY, Relabeller
from server.runtime.registry import Registry
from server.runtime.states import FAILED, RUNNING, STARTING, STOPPED, State
from server.runtime.storage import Location
from server.runtime.taps import Callback, DeliveryPool, Tap
from server.runtime.versions import fingerprint

log = logging.getLogger(__name__)


class Core(Protocol):
    """What shared execution asks of the runtime: its public deploy, stop and remove."""

    def deploy(
        self,
        diagram_id: str,
        plan: Plan,
        on_batch: Callback | None = None,
        version: str | int | None = None,
        relabel: Relabeller | None = None,
    ) -> str: ...

    def stop(self, diagram_id: str) -> None: ...

    def remove(self, diagram_id: str) -> None: ...


class SharedExecution:
    def __init__(
        self,
        core: Core,
        registry: Registry,
        launcher: Launcher,
        diagrams: checkpoints.Diagrams,
        result_logs: ResultLogs,
        delivery: DeliveryPool,
        settings: RuntimeSettings,
    ) -> None:
        self.core, self.registry, self.launcher = core, registry, launcher
        self.diagrams, self.result_logs = diagrams, result_logs
        self.delivery, self.settings = delivery, settings

    def share(
        self,
        diagram_id: str,
        plan: Plan,
        directory: checkpoints.DiagramDir,
        on_batch: Callback | None,
        relabel: Relabeller | None,
    ) -> bool:
        """Deploy the diagram as a member of the host of its plan's key (or of its prefix's:
        ``overlap.py``), starting the host if it is not running; False if it runs alone
        instead: it is a host, it relabels its results, it asks for real-time mode (its
        slots are its own: ``modes.py``), sharing is off, it ran alone before, its plan has
        state and the host has read since it started (its windows would hold tuples from
        before this diagram came), or the host is stopped and behind its inputs."""
        joined = directory.membership()
        if sharing.is_host(diagram_id):
            return False
        if joined is None and (
            relabel is not None
            or plan.realtime
            or not self.settings.share_plans
            or directory.ran_alone()
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
        with self.registry.diagram_lock(host_id):
            if joined is None and (
                (not sharing.stateless(plan) and self._host_has_read(host_plan))
                or self._host_is_behind(host_id, host_plan)
            ):
                return False
            membership = Membership(
                host_id,
                names,
                shared,
                residual,
                bases=None if joined is None else joined["bases"],
            )
            member = Deployment(
                diagram_id,
                directory.version,
                plan,
                directory,
                on_batch,
                member=membership,
                state=STARTING,
            )
            self.registry.register(member)
            try:
                host = self._host(host_id, host_plan)
            except SluiceError as err:  # the host's retries attach the member once it runs
                if "diagram" in err.params:  # told as the member's, not the host's
                    err = type(err)(
                        code=err.code, details=err.details, **{**err.params, "diagram": diagram_id}
                    )
                if member.state == STARTING:
                    self.registry.set_state(member, FAILED, str(err))
                raise err from None
            if not membership.next_at:  # not attached yet by the host's start (``launched``)
                self._attach(host, member, joined and joined.get("stopped_at"))
        return True

    def _host_has_read(self, host_plan: Plan) -> bool:
        """Whether the host of ``host_plan`` has a start its inputs have moved on from."""
        directory = self.diagrams.version(host_plan.name, fingerprint(host_plan))
        start = directory.start()
        if start is None:
            return False
        heads = self.launcher.input_heads(host_plan)
        return any(heads[name].seq != position.seq for name, position in start.items())

    def _host_is_behind(self, host_id: str, host_plan: Plan) -> bool:
        """Whether the host, not running, would go on from before its inputs' ends: a new
        member joining it would get rows sent before it came, so it runs alone instead."""
        host = self.registry.get(host_id)
        version = fingerprint(host_plan)
        if host is not None and host.state == RUNNING and host.version == version:
            return False
        directory = self.diagrams.version(host_id, version)
        if directory.start() is None:
            return False
        claims = directory.claims()
        heads = self.launcher.input_heads(host_plan)
        return any(claims.get(name, head.seq) < head.seq for name, head in heads.items())

    def _host(self, host_id: str, host_plan: Plan) -> Deployment:
        """The host, running: deployed (or resumed from its checkpoint) unless it runs."""
        version = fingerprint(host_plan)
        with self.registry.diagram_lock(host_id):
            host = self.registry.get(host_id)
            if host is None or host.state != RUNNING or host.version != version:
                fan_out = functools.partial(self._fan_out, host_id)
                self.core.deploy(host_id, host_plan, fan_out, version)
                host = self.registry.get(host_id)
            assert host is not None
            return host

    def launched(self, host: Deployment) -> None:
        """A deployment's queries are up: its members whose joining waited for it join."""
        waiting = [
            d
            for d in self.registry.members(host.diagram_id)
            if d.joined() is None and d.state != STOPPED
        ]
        for member in waiting:
            self._attach(host, member)

    def _attach(
        self, host: Deployment, member: Deployment, stopped_at: dict[str, int] | None = None
    ) -> None:
        """Start handing the running host's batches to ``member``. A new member joins at the
        host's result logs' ends, recorded durably before anything reaches it. One that
        joined before is first handed what the host logged since it was stopped
        (``stopped_at``), or else since the host's queries started (a restart), like a
        diagram of its own catching up from its checkpoint. The registry's lock, which
        ``_fan_out`` holds too, makes the switch to live batches a batch boundary."""
        m, hosting = member.member, host.hosting
        assert m is not None, f"{member.diagram_id} is not a member"
        assert hosting is not None, f"{host.diagram_id} is not a host"
        with self.registry.changed:
            if m.residual is not None:
                self._add_residual(host, m.residual)
            sinks = {output: host.sinks[name] for output, name in m.hosted.items()}
            ends = {output: sink.end() for output, sink in sinks.items()}
            if m.bases is None:
                m.bases, resume = dict(ends), dict(ends)
                _record(member)
            else:
                resume = stopped_at or {
                    output: hosting.start_ends.get(name, ends[output])
                    for output, name in m.hosted.items()
                }
                if stopped_at is not None:  # handed on below: a crash must not hand them again
                    _record(member)
            if member.on_batch is not None:
                m.taps = {
                    output: Tap(output, member.on_batch, self.settings.tap_queue, self.delivery)
                    for output in sinks
                }
            for output, tap in m.taps.items():
                for table in sinks[output].logged(resume[output], ends[output]):
                    mine = sharing.from_base(table, m.bases[output], resume[output])
                    if mine is not None:
                        tap.offer(mine)
            m.next_at = ends
            for output, name in m.hosted.items():
                self.result_logs.alias(output, name)
            self.registry.set_state(member, RUNNING)

    def leave(self, member: Deployment, state: State, error: str | None = None) -> None:
        """Stop handing a member batches; what it was handed up to is recorded, so deploying
        it again hands it what the host logged meanwhile."""
        m = member.member
        assert m is not None, f"{member.diagram_id} is not a member"
        with self.registry.changed:
            taps, m.taps = m.taps, {}
            stopped_at, m.next_at = m.next_at, {}
        for tap in taps.values():
            tap.close()
        if stopped_at and m.bases is not None:
            _record(member, stopped_at)
        self.registry.set_state(member, state, error or member.error)

    def _add_residual(self, host: Deployment, residual: overlap.Residual) -> None:
        """Have the running prefix ``host`` split its batches for ``residual`` too, from its
        next batch on (unless it does already): recorded durably first, so a restart of the
        host splits them for it from its first batch."""
        dispatcher = host.hosting.dispatcher if host.hosting is not None else None
        assert dispatcher is not None, f"{host.diagram_id} is not a running prefix host"
        (output,) = host.plan.outputs
        name = overlap.log_name(output, residual.name)
        if name in host.sinks:
            return
        kept = host.directory.residuals()
        kept[residual.name] = residual.stored()
        host.directory.keep_residuals(kept)
        location = host.directory.residual_results(residual.name)
        sink = self.launcher.output_sink(host, name, location, output)
        dispatcher.add(residual, sink)

    def _fan_out(self, host_id: str, output: str, table: pa.Table) -> None:
        """The host's tap: each running member's tap is offered the batch from where it is
        to go on, as its own output's (under the registry's lock: see ``_attach``)."""
        end = int((table.schema.metadata or {})[NEXT_KEY])
        with self.registry.lock:
            for member in self.registry.members(host_id):
                m = member.member
                if m is None or member.state != RUNNING or not m.bases:
                    continue
                for name, hosted in m.hosted.items():
                    tap, since = m.taps.get(name), m.next_at.get(name)
                    if hosted != output or since is None:
                        continue
                    mine = sharing.from_base(table, m.bases[name], since)
                    if mine is not None and tap is not None:
                        tap.offer(mine)
                    m.next_at[name] = max(since, end)

    def release(self, key: str) -> None:
        """Remove the host of ``key`` once no diagram, registered or on disk, is its member;
        a prefix host's residuals that no member has any more go."""
        host_id = sharing.HOST + key
        registered = bool(self.registry.members(host_id))
        if registered and not overlap.is_prefix_host(host_id):
            self.stop_idle_host(host_id)
            return
        joined = [m for m in self._memberships() if m is not None and m.get("key") == key]
        if not registered and not joined:
            self.core.remove(host_id)
            return
        self._prune_residuals(host_id, {m.get("residual") for m in joined})
        if registered:
            self.stop_idle_host(host_id)

    def _prune_residuals(self, host_id: str, joined: set[str | None]) -> None:
        """Stop splitting a prefix host's batches for residuals that neither a member on
        disk (``joined``) nor a registered one has, and drop their logs. Under the host's
        lock, which a member holds while it joins: none joins meanwhile."""
        with self.registry.diagram_lock(host_id):
            members = [d.member for d in self.registry.members(host_id) if d.member is not None]
            used = joined | {m.residual.name for m in members if m.residual is not None}
            host = self.registry.get(host_id)
            hosting = host.hosting if host is not None else None
            for directory in self.diagrams.versions(host_id):
                residuals = directory.residuals()
                unused = set(residuals) - used
                if not unused:
                    continue
                directory.keep_residuals({n: t for n, t in residuals.items() if n in used})
                for name in unused:
                    split = hosting.dispatcher if hosting is not None else None
                    sink = split.drop(name) if split is not None else None
                    if sink is not None and host is not None and hosting is not None:
                        with self.registry.lock:
                            host.sinks.pop(sink.name, None)
                            hosting.start_ends.pop(sink.name, None)
                        sink.close()
                        self.result_logs.forget(sink.name)
                    directory.residual_results(name).delete()

    def _memberships(self) -> list[dict | None]:
        return [d.membership() for d in self.diagrams.all()]

    def own_logs(self, member: Deployment, output: str) -> tuple[Location, Location] | None:
        """Where a stopped member's ``output`` is logged, if the host logged it for that member
        alone from its start (base 0, no other member running, the host stopped): the host's
        checkpoint and log (its residual's, under a prefix host) are then the member's own
        (``Runtime.carry``)."""
        m = member.member
        assert m is not None
        host = self.registry.get(m.host)
        members = self.registry.members(m.host)
        others = [d for d in members if d is not member and d.state != STOPPED]
        if host is None or others or host.state == RUNNING:
            return None
        if (m.bases or {}).get(output) != 0:
            return None
        if m.residual is None:
            hosted = m.hosted[output]
            return host.directory.checkpoint(hosted), host.directory.results(hosted)
        (prefix,) = host.plan.outputs  # a prefix host has one output, split per residual
        return host.directory.checkpoint(prefix), host.directory.residual_results(m.residual.name)

    def stop_idle_host(self, host_id: str) -> None:
        """Stop a host all of whose registered members are stopped (its checkpoint stays)."""
        if all(m.state == STOPPED for m in self.registry.members(host_id)):
            self.core.stop(host_id)


def _record(member: Deployment, stopped_at: dict[str, int] | None = None) -> None:
    """Write down, durably, which host a member reads from where (``DiagramDir.join``)."""
    m = member.member
    assert m is not None and m.bases is not None
    key = m.host.removeprefix(sharing.HOST)
    residual = m.residual.name if m.residual is not None else None
    member.directory.join(key, m.bases, stopped_at, residual)
