"""Delivery per audience equals the per-subscriber decision (issue 37): for random batches
carrying every label kind (sources, raw sources, levels, sps denying rows, sps hiding fields)
and random sets of subscribers over real catalog sessions with different rights, clearances
and roles, what each socket receives through its audience's room is exactly what the old
per-subscriber decision (``tests/boxes/test_visible.old_decision``, on that subscriber's own
reader) gives it, and what a per-subject read of the same batch gives it."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boxes.labels import DENIED_COLUMN, HIDDEN_COLUMN, NOGRANT_COLUMN
from boxes.levels import LEVEL_COLUMN
from boxes.output import STRONG, WEAK
from catalog import Action, ObjectType
from server.realtime.delivery import TUPLES_EVENT, Delivery, Labels
from server.realtime.settling import decided_of
from tests.boxes.test_visible import BITS, batches, old_decision
from tests.server.realtime.recorder import Recorder

T, A = ObjectType, Action
INPUTS = ("in1", "in2", "feed")  # label bit i <=> INPUTS[i]
ROLES = ("CUSTOMER1", "CUSTOMER2", "INFO_PROVIDER")  # a role word's bit i <=> ROLES[i]
COMPANIES = ("A", "B", "C")  # a level word's bit i <=> banks:COMPANIES[i]
assert len(INPUTS) == len(ROLES) == len(COMPANIES) == BITS


@pytest.fixture
def world(app, template):
    """Sessions that read out1 differently: al (CUSTOMER1: every input, cleared for banks:A),
    bob (CUSTOMER2: in1 as tuples, in2 only aggregated), ed (INFO_PROVIDER: feed only,
    cleared for banks:B and C), al again with a second session, and cy (TWIN: bob's rights
    and clearance, a role no random sp word names); the bits of the random batches' role and
    level words, as catalog bits."""
    cat = app.extensions["sluice"].catalog
    joe = cat.sessions.login("joe", template[1]["joe"])[1]
    al, ed = (cat.sessions.login(u, template[1][u])[1] for u in ("al", "ed"))
    cat.grants.grant(ed, "CUSTOMER1", A.READ_TUPLE, T.STREAM, "feed")
    cat.grants.grant(ed, "INFO_PROVIDER", A.READ_TUPLE, T.STREAM, "feed")
    cat.levels.set_clearance(joe, "CUSTOMER1", {"banks": "A"})
    cat.levels.set_clearance(joe, "INFO_PROVIDER", {"banks": "T"})
    cat.accounts.add_role(joe, "TWIN")  # bob's rights and clearance, but no sp names it
    for role in ("CUSTOMER2", "TWIN"):
        cat.grants.grant(joe, role, A.READ_TUPLE, T.STREAM, "in1")
        cat.grants.grant(joe, role, A.READ_AGGREGATE, T.STREAM, "in2")
    cat.accounts.add_user(joe, "cy", template[1]["bob"], ["TWIN"])
    for role in (*ROLES, "TWIN"):
        for action in (A.VIEW_OBJECT, A.SUBSCRIBE):
            cat.grants.grant(al, role, action, T.OUTPUT, "out1")
    users = ("al", "bob", "ed", "al", "cy")
    who = [cat.sessions.login(u, template[1][u if u != "cy" else "bob"])[1] for u in users]
    snapshot = cat.core.snapshot
    sources = {s: snapshot.find(T.STREAM, s).source_index for s in INPUTS}
    roles = [1 << snapshot.role_bits[r] for r in ROLES]
    companies = [snapshot.levels.mask_of({"banks": c}) for c in COMPANIES]
    return cat, who, Labels(INPUTS, sources), roles, companies


def spread(value: int, bits: list[int]) -> int:
    """A random word's bits (0..BITS) as the catalog's: bit i becomes ``bits[i]``."""
    out = 0
    for i, bit in enumerate(bits):
        if value >> i & 1:
            out |= bit
    return out


def as_catalog(table: pa.Table, roles: list[int], companies: list[int]) -> pa.Table:
    """The batch with its role words (denied, hidden, no grant option) and levels on the
    catalog's role and company bits; its source labels stay (``INPUTS`` name the bits)."""

    def words(column, bits: list[int]) -> pa.Array:
        values = column.to_pylist()
        return pa.array([spread(v & (1 << BITS) - 1, bits) for v in values], pa.int64())

    for name, bits in ((DENIED_COLUMN, roles), (NOGRANT_COLUMN, roles), (LEVEL_COLUMN, companies)):
        if name in table.column_names:
            at = table.column_names.index(name)
            table = table.set_column(at, name, words(table.column(name), bits))
    if HIDDEN_COLUMN in table.column_names:
        struct = table.column(HIDDEN_COLUMN).combine_chunks()
        fields = [words(struct.field(i), roles) for i in range(struct.type.num_fields)]
        names = [f.name for f in struct.type]
        at = table.column_names.index(HIDDEN_COLUMN)
        table = table.set_column(at, HIDDEN_COLUMN, pa.StructArray.from_arrays(fields, names))
    return table


def shown(tuples: list[dict]) -> list[tuple]:
    """Delivered tuples as (x, y, the fields hidden: null in the tuple)."""
    return [(t["x"], t["y"], tuple(t.get("_hidden", ()))) for t in tuples]


def received(sent: Recorder, sid: str) -> list[tuple]:
    """What ``sid`` received."""
    return shown(
        [
            t
            for to, e, data in sent.events
            if to == sid and e == TUPLES_EVENT
            for t in data["tuples"]
        ]
    )


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    table=batches(),
    subscribers=st.lists(st.integers(0, 4), min_size=1, max_size=8),
    semantic=st.sampled_from([STRONG, WEAK]),
    leveled=st.booleans(),
)
def test_each_socket_gets_through_its_audience_what_its_own_decision_gives(
    world, table, subscribers, semantic, leveled
):
    cat, who, labels, roles, companies = world
    labels = Labels(labels.inputs, labels.sources, leveled)
    table = as_catalog(table, roles, companies)
    sent = Recorder()
    delivery = Delivery(cat, sent)
    delivery.register({"out1": None}, labels, {"out1": semantic})
    sids = [f"s{i}" for i in range(len(subscribers))]
    for sid, subject in zip(sids, subscribers, strict=True):
        delivery.subscribe(sid, who[subject], "out1")
    delivery.on_batch("out1", table)
    snapshot, now = cat.core.current(), cat.core.clock()
    for sid, subject in zip(sids, subscribers, strict=True):
        reader = decided_of(snapshot, now, who[subject], labels).reader
        picked, hidden = old_decision(table, reader, semantic, leveled)
        wanted = []
        for i, row in enumerate(picked.tolist()):
            names = tuple(n for n in hidden if hidden[n][i])
            x, y = (None if n in names else table.column(n)[row].as_py() for n in ("x", "y"))
            wanted.append((x, y, names))
        assert received(sent, sid) == wanted
        assert shown(delivery.visible_rows(who[subject], "out1", table)) == wanted
