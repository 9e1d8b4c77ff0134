"""The catalog's rules for derived inputs, on the seeded world (al owns q1 and its out1).

al builds ``re`` on q1's output: q1 can then be neither dropped nor replaced, ``re`` may not be
changed to read its own output, bob (who may not see out1) finds no such output, and what a
restart needs to run ``re`` names q1's source streams with their source indexes.
"""

from __future__ import annotations

import pytest

from boxes import codes
from boxes.errors import Conflict, InvalidInput
from catalog import ObjectType
from server.control.diagrams import plan_for, spec_of
from tests.paper import Q1

RE = {
    "version": 1,
    "name": "re",
    "inputs": {"q": {"output": "out1"}},
    "boxes": {"high": {"type": "filter", "in": "q", "where": "avg_price > 100"}},
    "outputs": {"reout": {"from": "high"}},
}


@pytest.fixture
def cat(app):
    return app.extensions["sluice"].catalog


def test_the_catalog_keeps_derived_inputs_safe(cat, template):
    passwords = template[1]
    al = cat.sessions.login("al", passwords["al"])[1]
    plan = plan_for(cat, al, RE)
    assert plan.label_sources == ("in1", "in2")
    cat.objects.add_diagram(al, spec_of(plan, RE))
    for change in (
        lambda: cat.objects.drop(al, ObjectType.DIAGRAM, "q1"),
        lambda: cat.objects.replace_diagram(al, spec_of(plan_for(cat, al, Q1), Q1)),
    ):
        with pytest.raises(Conflict) as kept:
            change()
        assert kept.value.code == codes.DERIVED_IN_USE
    own = {**RE, "inputs": {"q": {"output": "reout"}}, "outputs": {"again": {"from": "high"}}}
    with pytest.raises(InvalidInput) as cycle:
        cat.objects.replace_diagram(al, spec_of(plan_for(cat, al, own), own))
    assert cycle.value.code == codes.DERIVED_CYCLE

    bob = cat.sessions.login("bob", passwords["bob"])[1]
    assert cat.objects.derived_outputs(bob, ["out1"]) == {}  # unseen: as if missing

    cat.objects.set_query_status(al, "re", "running")
    (resumable,) = [r for r in cat.objects.resumable() if r.diagram.name == "re"]
    streams = {n: cat.core.snapshot.find(ObjectType.STREAM, n) for n in ("in1", "in2")}
    assert resumable.sources == {n: s.source_index for n, s in streams.items()}
    assert resumable.derived["out1"].sources == ("in1", "in2")
    assert resumable.schemas == {}
