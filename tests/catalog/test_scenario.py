"""The Borealis paper's scenario (Section 4.1, Figures 8 to 10), replayed step by step."""
from __future__ import annotations

import pytest

import borealis_figures as fig
from catalog import Action, DiagramSpec, ObjectType
from catalog.authorizer import decide

T, A = ObjectType, Action
PAPER_TYPES = {T.SYSTEM, T.SCHEMA, T.STREAM, T.OUTPUT}


def table(cat, admin):
    """The permission table restricted to the kinds of object the paper's figures show."""
    return {(r.name, r.role) for r in cat.grants.table(admin) if r.type in PAPER_TYPES}


def names(cat, subject):
    return [o.name for o in cat.objects.lookup(subject)]


def delivered(labels, readable):
    """The strong semantic: a tuple labelled L reaches a reader with readable set R iff L ⊆ R."""
    return [label for label in labels if label & ~readable == 0]


@pytest.fixture
def scenario(cat, admin, people):
    people({"ed": ["INFO_PROVIDER"], "al": ["CUSTOMER1"], "bob": ["CUSTOMER2"]})
    return admin


def test_figures_8_to_10(cat, scenario, login):
    joe = scenario
    # Figure 8: at first only the system object, on which ADMIN has access.
    assert table(cat, joe) == fig.SYSTEM_ONLY
    cat.objects.add_schema(joe, "s", {"fields": {"time": "timestamp", "price": "double"}})
    for stream in ("in1", "in2"):
        cat.objects.add_stream(joe, stream, "s")
    assert table(cat, joe) == fig.JOE_ADDED
    for role, actions in (("CUSTOMER1", (A.VIEW_OBJECT, A.READ_TUPLE)),
                          ("INFO_PROVIDER", (A.VIEW_OBJECT, A.WRITE))):
        cat.grants.grant(joe, role, A.VIEW_OBJECT, T.SCHEMA, "s")
        for stream in ("in1", "in2"):
            for action in actions:
                cat.grants.grant(joe, role, action, T.STREAM, stream)
    cat.grants.grant(joe, "CUSTOMER1", A.ADD, T.SYSTEM, "system")
    assert table(cat, joe) == fig.JOE_GRANTED

    ed = login("ed")
    assert names(cat, ed) == ["s", "in1", "in2"]
    sources = {o.name: 1 << o.source_index for o in cat.objects.lookup(ed) if o.kind == "input"}
    assert sources == fig.SOURCE_IDS

    # Figure 9: Al sees what Ed sees, inserts q1 and owns its output through CUSTOMER1.
    al = login("al")
    assert names(cat, al) == ["s", "in1", "in2"]
    created = cat.objects.add_diagram(al, DiagramSpec("q1", ("in1", "in2"), ("merge", "avg"),
                                                      ("out1",)))
    assert {(o.name, o.owner_user, o.owner_role) for o in created} == {
        ("q1", "al", "CUSTOMER1"), ("q1.merge", "al", "CUSTOMER1"),
        ("q1.avg", "al", "CUSTOMER1"), ("out1", "al", "CUSTOMER1")}
    assert table(cat, joe) == fig.AL_INSERTED
    assert delivered([1, 2, 3], cat.sessions.readable_sources(al)) == [1, 2, 3]

    # Figure 10: Bob sees nothing until Joe and then Al grant.
    bob = login("bob")
    assert names(cat, bob) == []
    assert cat.sessions.readable_sources(bob) == 0
    cat.grants.grant(joe, "CUSTOMER2", A.VIEW_OBJECT, T.SCHEMA, "s")
    for action in (A.VIEW_OBJECT, A.READ_TUPLE):
        cat.grants.grant(joe, "CUSTOMER2", action, T.STREAM, "in1")
    for action in (A.VIEW_OBJECT, A.SUBSCRIBE):
        cat.grants.grant(al, "CUSTOMER2", action, T.OUTPUT, "out1")
    assert table(cat, joe) == fig.BOB_GRANTED
    assert names(cat, bob) == ["s", "in1", "out1"]
    out1 = cat.objects.get(bob, T.OUTPUT, "out1")
    assert decide(bob, A.SUBSCRIBE, out1, cat.core.snapshot).allowed
    # Bob receives only the aggregates that come from in1 alone (source stream ID 1).
    assert delivered([1, 2, 3], cat.sessions.readable_sources(bob)) == [1]
    # The paper's other users are untouched by Bob's grants.
    assert names(cat, ed) == ["s", "in1", "in2"]
    assert names(cat, al) == ["s", "in1", "in2", "q1", "q1.avg", "q1.merge", "out1"]
