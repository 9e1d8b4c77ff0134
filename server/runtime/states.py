"""A deployment's states and the one table of moves between them.

Every change of a deployment's state goes through ``move``: a move the table does not list
is refused (``IllegalMove``, a bug in the runtime, never the user's), and a legal one has the
effect the table declares on the deployment's error and failed output. A shared
execution's member follows its host (``follows``), so a move of the host is its members'
too, but for those stopped on their own.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class State(str, enum.Enum):
    STARTING = "starting"  # deploying: its outputs are taken, its queries not yet all up
    RUNNING = "running"
    STOPPED = "stopped"
    FAILED = "failed"

    def __str__(self) -> str:
        return self.value


STARTING, RUNNING, STOPPED, FAILED = State.STARTING, State.RUNNING, State.STOPPED, State.FAILED


class Error(enum.Enum):
    """What a move does to the deployment's error (and the output whose query failed)."""

    CLEARED = "cleared"  # error and failed output gone: it runs
    SET = "set"  # the move's error, which it must give
    KEPT = "kept"  # the move's error if it gives one, else the one it had


@dataclass(frozen=True)
class Move:
    why: str
    error: Error


# Each legal move, and why the runtime makes it. A deployment is born STARTING (registered,
# its outputs taken); nothing moves a deployment back to STARTING but a restart of a failed
# one, and nothing fails a stopped one.
MOVES: dict[tuple[State, State], Move] = {
    (STARTING, RUNNING): Move(
        "its queries are up, or a member joined its running host", Error.CLEARED
    ),
    (STARTING, FAILED): Move("its queries, or its host's, did not come up", Error.SET),
    (STARTING, STOPPED): Move("stopped, or its host was, before it ran", Error.KEPT),
    (RUNNING, RUNNING): Move("a member joins its host again", Error.CLEARED),
    (RUNNING, FAILED): Move(
        "a query ended, its state outgrew the limit, or the driver went", Error.SET
    ),
    (RUNNING, STOPPED): Move("stopped, deployed anew, or the runtime closed", Error.KEPT),
    (FAILED, STARTING): Move("restarted from its checkpoint", Error.KEPT),
    (FAILED, RUNNING): Move(
        "a member whose host failed to start joins it once it runs", Error.CLEARED
    ),
    (FAILED, FAILED): Move("the driver went while it waited for a restart", Error.SET),
    (FAILED, STOPPED): Move("stopped or deployed anew after failing", Error.KEPT),
    (STOPPED, RUNNING): Move(
        "a member joins its host, which was stopped to run again", Error.CLEARED
    ),
    (STOPPED, STOPPED): Move("deployed anew, or its host stopped, while stopped", Error.KEPT),
}


class IllegalMove(RuntimeError):
    """A state change the table does not allow: the runtime's own mistake."""

    def __init__(self, diagram_id: str, old: State, new: State) -> None:
        super().__init__(f"diagram {diagram_id} cannot go from {old} to {new}")


@dataclass(frozen=True)
class Outcome:
    state: State
    error: str | None
    failed_output: str | None


def move(
    diagram_id: str,
    old: Outcome,
    new: State,
    error: str | None = None,
) -> Outcome:
    """What a deployment is after moving from ``old`` to ``new`` with ``error``; IllegalMove
    if the table has no such move (or a failure comes without its error)."""
    legal = MOVES.get((old.state, new))
    if legal is None or (legal.error is Error.SET and error is None):
        raise IllegalMove(diagram_id, old.state, new)
    if legal.error is Error.CLEARED:
        return Outcome(new, None, None)
    if legal.error is Error.SET:
        return Outcome(new, error, old.failed_output)
    return Outcome(new, error or old.error, old.failed_output)


def follows(member: State) -> bool:
    """Whether a joined member takes its host's new state: not if it stopped on its own."""
    return member is not STOPPED
