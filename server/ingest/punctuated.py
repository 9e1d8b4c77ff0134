"""Security punctuations at the ingestion log's single writer (seed 003, docs/punctuations.md).

The writer is where the order of sps and tuples is fixed and made durable, so the Security
Shield runs there, one per stream: an sp is logged as a *control frame* (a frame of no rows,
which readers of rows skip: ``segments.read_range``) and folded into the shield's state; a
governed stream's tuple frame gets its stamps and its policy label columns
(``boxes.punctuations.columns``) before it is written. The state is a function of the log:
``replay`` folds a log's frames, from the snapshot frame the writer puts first in every new
segment (so dropping old segments loses nothing), and gives the state the writer had.

A batch that mixes sps and tuples is one frame, whatever their interleaving: its tuples with
their labels, and its sps in the frame's metadata (``sluice.sps``), each run with the row it
came before, so that a crash keeps all of the batch or none, and one sp per tuple costs one
frame per batch rather than two per tuple. A batch of sps alone is a control frame.

A frame is governed iff it carries the stamp columns; ungoverned frames (a stream no sp
governs, or written before it was) leave the shield alone, live and on replay alike.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from boxes.punctuations import (
    Deciders,
    Policy,
    ShieldState,
    Sp,
    admit_batch,
)
from boxes.punctuations.columns import STAMP_TS, label_columns, stamp_columns, stamps_of
from boxes.punctuations.model import NO_SPS, NO_STAMPS, ServerPolicy, SpsAt, Stamps, from_json
from boxes.punctuations.shield import EMPTY, state_from_json, state_to_json
from server.ingest.segments import Frame

SPS, SNAPSHOT = "sps", "shield"
SPS_KEY = b"sluice.sps"  # a governed frame's sps: [[row they came before, [sp, ...]], ...]


@dataclass(frozen=True)
class Governance:
    """What the catalog said at admission about a governed stream: its fields, its tuple
    identifier field (None: none), every role's bit and the server's own policy (None: none;
    section 4.2), combined with what the provider's mutable sps grant."""

    fields: tuple[str, ...]
    roles: Mapping[str, int]
    tid_field: str | None = None
    server: ServerPolicy | None = None


def sps_payload(sps: Sequence[Sp]) -> bytes:
    return json.dumps({SPS: [sp.to_json() for sp in sps]}).encode()


def snapshot_payload(state: ShieldState) -> bytes:
    return json.dumps({SNAPSHOT: state_to_json(state)}).encode()


def is_snapshot(frame: Frame) -> bool:
    """Whether a logged frame is a snapshot of the shield's state."""
    return frame.count == 0 and SNAPSHOT in json.loads(frame.payload)


def with_sps(table: pa.Table, sps_at: SpsAt) -> pa.Table:
    """``table`` carrying the sps its batch had among its rows (none: as it is)."""
    if not sps_at:
        return table
    runs = sps_at.runs()
    value = json.dumps([[at, [sp.to_json() for sp in sps]] for at, sps in runs]).encode()
    return table.replace_schema_metadata({**(table.schema.metadata or {}), SPS_KEY: value})


def sps_of(table: pa.Table) -> SpsAt:
    """``with_sps`` read back."""
    value = (table.schema.metadata or {}).get(SPS_KEY)
    if value is None:
        return NO_SPS
    return SpsAt.of((at, [from_json(s) for s in sps]) for at, sps in json.loads(value))


def read_control(payload: bytes) -> list[Sp] | ShieldState:
    """The sps, or the snapshot of the shield's state, a control frame holds."""
    value = json.loads(payload)
    if SPS in value:
        return [from_json(s) for s in value[SPS]]
    return state_from_json(value[SNAPSHOT])


class StreamShield:
    """One stream's shield state and its compiled policies (``Deciders``: a policy is compiled
    once for the catalog's roles, then every run of tuples under it costs one label)."""

    def __init__(self, stream: str, state: ShieldState = EMPTY) -> None:
        self.stream, self.state = stream, state
        self._compiled: tuple[Governance, Deciders] | None = None

    def admit_sps(self, sps: Iterable[Sp]) -> ShieldState:
        """The state after ``sps`` (not kept: the writer keeps it once the frame is durable)."""
        return admit_batch(self.state, NO_STAMPS, SpsAt.of([(0, tuple(sps))]))[0]

    def label(
        self,
        table: pa.Table,
        stamps: Stamps,
        governance: Governance,
        sps_at: SpsAt = NO_SPS,
    ) -> tuple[pa.Table, ShieldState]:
        """``table`` with its stamps and policy label columns (and the sps ``sps_at`` puts
        among its rows: ``with_sps``), and the state after it."""
        state, admitted = admit_batch(self.state, stamps, sps_at)
        tid = governance.tid_field
        tids = None if tid is None else lambda: table.column(tid).to_pylist()
        labels = self._deciders(governance).labels(admitted, tids)
        columns = {**stamp_columns(stamps), **label_columns(labels, governance.fields)}
        for name, column in columns.items():
            table = table.append_column(name, column)
        return with_sps(table, sps_at), state

    def _deciders(self, governance: Governance) -> Deciders:
        compiled = self._compiled
        if compiled is None or compiled[0] != governance:
            fields, roles, tid = governance.fields, governance.roles, governance.tid_field
            found = governance.server
            server = None if found is None else Policy(0, found.sps)
            union = found is not None and found.union
            deciders = Deciders(self.stream, fields, roles, tid, server=server, union=union)
            compiled = self._compiled = (governance, deciders)
        return compiled[1]


def replay(stream: str, frames: Iterable[tuple[int, bytes]]) -> ShieldState:
    """The shield's state after a log's frames ``(row count, payload)``, in order, from the
    newest snapshot frame among them."""
    state = EMPTY
    for count, payload in frames:
        if count == 0:
            control = read_control(payload)
            if isinstance(control, ShieldState):
                state = control
            else:
                state = StreamShield(stream, state).admit_sps(control)
            continue
        table = pa.ipc.open_stream(payload).read_all()
        if STAMP_TS in table.column_names:
            state, _ = admit_batch(state, stamps_of(table), sps_of(table))
    return state
