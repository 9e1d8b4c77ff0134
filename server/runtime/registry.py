"""The registry of deployments: which diagram runs what, their locks, and every change of
state, kept to the one table (``states.py``).

Locks, always taken in this order: a diagram's own (held through its deploy, restart, stop
or check, so that one slow diagram holds up only itself), then ``launching`` (Spark starts
one diagram's queries at a time), then ``lock`` (the registry, held only for a moment). A
status read never waits on a diagram's lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from boxes import codes
from boxes.document import Plan
from boxes.errors import Conflict
from server.runtime import states
from server.runtime.deployment import Deployment
from server.runtime.states import RUNNING, STARTING, State


class Registry:
    def __init__(self) -> None:
        self._deployments: dict[str, Deployment] = {}
        self._locks: dict[str, threading.RLock] = {}
        self.launching = threading.Lock()
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)  # notified when a diagram changes state

    def diagram_lock(self, diagram_id: str) -> threading.RLock:
        with self.lock:
            return self._locks.setdefault(diagram_id, threading.RLock())

    def get(self, diagram_id: str) -> Deployment | None:
        with self.lock:
            return self._deployments.get(diagram_id)

    def all(self) -> list[Deployment]:
        with self.lock:
            return list(self._deployments.values())

    def members(self, host_id: str) -> list[Deployment]:
        """The registered members of the host ``host_id``, joined or not."""
        with self.lock:
            return [
                d
                for d in self._deployments.values()
                if d.member is not None and d.member.host == host_id
            ]

    def register(self, deployment: Deployment) -> None:
        """Take a new deployment, starting, and its outputs (refused while another running or
        starting diagram has one): waiters on its state hear of it."""
        with self.changed:
            self._check_outputs_free(deployment.diagram_id, deployment.plan)
            self._deployments[deployment.diagram_id] = deployment
            self.changed.notify_all()

    def forget(self, diagram_id: str) -> Deployment | None:
        with self.lock:
            return self._deployments.pop(diagram_id, None)

    def _check_outputs_free(self, diagram_id: str, plan: Plan) -> None:
        for other in self._deployments.values():
            clash = set(other.plan.outputs) & set(plan.outputs)
            if other.diagram_id != diagram_id and other.state in (RUNNING, STARTING) and clash:
                raise Conflict(
                    code=codes.OUTPUT_IN_USE,
                    outputs=", ".join(sorted(clash)),
                    diagram=other.diagram_id,
                )

    def set_state(self, deployment: Deployment, state: State, error: str | None = None) -> None:
        """Move a deployment (``states.move``); a host's joined members follow it, but for
        those stopped on their own, and take its restarts."""
        with self.changed:
            now = states.Outcome(deployment.state, deployment.error, deployment.failed_output)
            after = states.move(deployment.diagram_id, now, state, error)
            joined = [m for m in self.members(deployment.diagram_id) if m.joined() is not None]
            following = [m for m in joined if states.follows(m.state)]
            for member in following:  # refused before anything changes
                was = states.Outcome(member.state, member.error, member.failed_output)
                states.move(member.diagram_id, was, state, after.error)
            deployment.state, deployment.error = after.state, after.error
            deployment.failed_output = after.failed_output
            for member in joined:
                member.restarts = deployment.restarts
            for member in following:
                member.state, member.error = after.state, after.error
            self.changed.notify_all()

    def wait_for(self, reached: Callable[[], bool], timeout: float | None) -> bool:
        """Wait until ``reached()`` (asked under the registry's lock at each change)."""
        with self.changed:
            return self.changed.wait_for(reached, timeout)
