"""The Borealis paper's scenario (Section 4.1, Figures 8 to 10), replayed step by step.

After every step the permission table and every user's lookup are compared with the paper.
Everyone logs in first, so each step also shows that a change reaches open sessions at once.
"""

from __future__ import annotations

import borealis_figures as fig
import pytest

from catalog import Action, DiagramSpec, ObjectType
from catalog.authorizer import decide

T, A = ObjectType, Action
PAPER_TYPES = {T.SYSTEM, T.SCHEMA, T.STREAM, T.OUTPUT}
INPUTS = ["s", "in1", "in2"]
Q1 = ["q1", "q1.avg", "q1.merge", "out1"]


def delivered(labels, readable):
    """The strong semantic: a tuple labelled L reaches a reader with readable set R iff L ⊆ R."""
    return [label for label in labels if label & ~readable == 0]


@pytest.fixture
def users(cat, admin, people, login):
    people({"ed": ["INFO_PROVIDER"], "al": ["CUSTOMER1"], "bob": ["CUSTOMER2"]})
    return {"joe": admin, "ed": login("ed"), "al": login("al"), "bob": login("bob")}


def test_figures_8_to_10(cat, users):
    joe, al = users["joe"], users["al"]

    def step(table, **lookups):
        rows = {(r.name, r.role) for r in cat.grants.table(joe) if r.type in PAPER_TYPES}
        assert rows == table
        assert {
            name: [o.name for o in cat.objects.lookup(s) if o.type is not T.BOX_TYPE]
            for name, s in users.items()
        } == lookups

    # Figure 8: at first only the system object, on which ADMIN has access.
    step(fig.SYSTEM_ONLY, joe=["system"], ed=[], al=[], bob=[])
    cat.objects.add_schema(joe, "s", {"fields": {"time": "timestamp", "price": "double"}})
    for stream in ("in1", "in2"):
        cat.objects.add_stream(joe, stream, "s")
    step(fig.JOE_ADDED, joe=["system", *INPUTS], ed=[], al=[], bob=[])
    for role, actions in (
        ("CUSTOMER1", (A.VIEW_OBJECT, A.READ_TUPLE)),
        ("INFO_PROVIDER", (A.VIEW_OBJECT, A.WRITE)),
    ):
        cat.grants.grant(joe, role, A.VIEW_OBJECT, T.SCHEMA, "s")
        for stream in ("in1", "in2"):
            for action in actions:
                cat.grants.grant(joe, role, action, T.STREAM, stream)
    cat.grants.grant(joe, "CUSTOMER1", A.ADD, T.SYSTEM, "system")
    step(fig.JOE_GRANTED, joe=["system", *INPUTS], ed=INPUTS, al=INPUTS, bob=[])
    sources = {
        o.name: 1 << o.source_index for o in cat.objects.lookup(users["ed"]) if o.kind == "input"
    }
    assert sources == fig.SOURCE_IDS

    # Figure 9: Al inserts q1 and owns its output through CUSTOMER1; he reads IDs 1, 2 and 3.
    created = cat.objects.add_diagram(
        al, DiagramSpec("q1", ("in1", "in2"), ("merge", "avg"), ("out1",))
    )
    assert {(o.name, o.owner_user, o.owner_role) for o in created} == {
        (name, "al", "CUSTOMER1") for name in Q1
    }
    step(fig.AL_INSERTED, joe=["system", *INPUTS, *Q1], ed=INPUTS, al=INPUTS + Q1, bob=[])
    assert delivered([1, 2, 3], cat.sessions.readable_sources(al)) == [1, 2, 3]

    # Figure 10: Bob's lookup is empty until Joe, then Al, grant to CUSTOMER2.
    bob = users["bob"]
    assert cat.sessions.readable_sources(bob) == 0
    cat.grants.grant(joe, "CUSTOMER2", A.VIEW_OBJECT, T.SCHEMA, "s")
    for action in (A.VIEW_OBJECT, A.READ_TUPLE):
        cat.grants.grant(joe, "CUSTOMER2", action, T.STREAM, "in1")
    for action in (A.VIEW_OBJECT, A.SUBSCRIBE):
        cat.grants.grant(al, "CUSTOMER2", action, T.OUTPUT, "out1")
    step(
        fig.BOB_GRANTED,
        joe=["system", *INPUTS, *Q1],
        ed=INPUTS,
        al=INPUTS + Q1,
        bob=["s", "in1", "out1"],
    )
    out1 = cat.objects.get(bob, T.OUTPUT, "out1")
    assert decide(bob, A.SUBSCRIBE, out1, cat.core.snapshot).allowed
    # Bob receives only the aggregates that come from in1 alone (source stream ID 1).
    assert delivered([1, 2, 3], cat.sessions.readable_sources(bob)) == [1]
