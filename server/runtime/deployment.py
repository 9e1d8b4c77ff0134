"""What the runtime holds of one deployed diagram: a ``Deployment`` runs its own queries,
alone or, with ``Hosting``, as a shared execution's host; one with a ``Membership`` is a
member instead, and runs none: its host's batches are handed to it.

The fields are written under the runtime's locks (``registry.py``); the state only through
``Registry.set_state``, which keeps to ``states.MOVES``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from boxes.document import Plan
from server.runtime import checkpoints, overlap
from server.runtime.modes import Mode
from server.runtime.outputs import OutputSink, Relabeller
from server.runtime.sparktypes import Query
from server.runtime.states import RUNNING, State
from server.runtime.taps import Callback, Tap


@dataclass
class Counts:
    """Rows out per observed box (``boxes/observed.py``): since the deploy, and in the newest
    batch that ran; and per output, the last batch whose counts are folded in and the time
    of the newest progress update looked at. Kept across automatic restarts, so a batch
    replayed from the checkpoint is not counted twice."""

    rows: dict[str, int] = field(default_factory=dict)
    batch_rows: dict[str, int] = field(default_factory=dict)
    folded: dict[str, int] = field(default_factory=dict)
    looked: dict[str, str] = field(default_factory=dict)


@dataclass
class Membership:
    """A member of a shared execution (``sharing.py``): its host's runtime id, per output the
    host's output it reads and the host's position it joined at (None until it has); the
    plan its host runs (its own, or its prefix) and, if a prefix, its filters
    (``overlap.py``); while joined, its taps and the host position each is to be handed rows
    from next."""

    host: str
    hosted: dict[str, str]
    shared: Plan
    residual: overlap.Residual | None = None
    bases: dict[str, int] | None = None
    taps: dict[str, Tap] = field(default_factory=dict)
    next_at: dict[str, int] = field(default_factory=dict)


@dataclass
class Hosting:
    """A shared execution's host (``sharing.HOST`` + key), while its queries run: per log,
    where it ended when they started (what a member joining again is handed from), and if it
    runs a prefix (``overlap.py``), the split of its batches among its members' residuals."""

    start_ends: dict[str, int] = field(default_factory=dict)
    dispatcher: overlap.Dispatcher | None = None


@dataclass
class Deployment:
    diagram_id: str
    version: str
    plan: Plan
    directory: checkpoints.DiagramDir
    on_batch: Callback | None = None
    relabel: Relabeller | None = None
    member: Membership | None = None
    hosting: Hosting | None = None
    restarts: int = 0
    retry: threading.Timer | None = None
    state: State = RUNNING
    error: str | None = None
    failed_output: str | None = None  # the output whose query failed, if one did
    # While its queries run: per output its sink (and a residual's, ``overlap.py``), its
    # query and the query's id.
    sinks: dict[str, OutputSink] = field(default_factory=dict)
    queries: dict[str, Query] = field(default_factory=dict)
    query_ids: dict[str, str] = field(default_factory=dict)
    modes: dict[str, Mode] = field(default_factory=dict)  # per output, how it runs and why
    counts: Counts = field(default_factory=Counts)

    def joined(self) -> Membership | None:
        """Its membership, once it has joined its host (has a base), else None."""
        return self.member if self.member is not None and self.member.bases is not None else None
