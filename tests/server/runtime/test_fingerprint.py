"""A plan's fingerprint names its checkpoint: it changes with what the plan computes (a
filter's condition, an aggregate's function; ``boxes/canonical.py`` keeps it the same in
every process), and a diagram checkpointed under the fingerprint from before parameters
counted resumes under it."""

from __future__ import annotations

from runtime_helpers import TRADE, Collector, plan_of, union_doc

from boxes.document import validate
from server.runtime.versions import fingerprint, legacy_fingerprint


def aggregate_doc(function: str) -> dict:
    return {
        "version": 1,
        "name": "q",
        "inputs": {"in1": {}},
        "boxes": {
            "per": {
                "type": "aggregate",
                "in": "in1",
                "window": {"size": "1m"},
                "group_by": ["symbol"],
                "aggregates": {"p": f"{function}(price)"},
            }
        },
        "outputs": {"q_out": {"from": "per"}},
    }


def test_a_changed_parameter_is_a_new_version_and_an_equal_plan_the_same():
    cheap, dear = (plan_of(union_doc("q", ["in1"], f"price < {p}")) for p in (10, 20))
    assert fingerprint(cheap) != fingerprint(dear)
    assert legacy_fingerprint(cheap) == legacy_fingerprint(dear)  # what the fix is for
    assert fingerprint(cheap) == fingerprint(plan_of(union_doc("q", ["in1"], "price < 10")))
    # same output schema, other state: an old checkpoint's sums would be read as maxima
    summed, most = (validate(aggregate_doc(f), {"in1": TRADE}) for f in ("sum", "max"))
    assert fingerprint(summed) != fingerprint(most)


def test_a_diagram_checkpointed_under_the_legacy_version_resumes_under_it(runtime):
    runtime.create_stream("in1", TRADE)
    plan, first = plan_of(union_doc("q", ["in1"], "price > 0")), Collector()
    old = runtime.deploy("q", plan, first, version=legacy_fingerprint(plan))  # as before
    runtime.append("in1", [{"symbol": "one", "price": 1.0}])
    first.wait_for_rows(1)
    runtime.stop("q")
    runtime.append("in1", [{"symbol": "while", "price": 2.0}])
    again = Collector()
    assert runtime.deploy("q", plan, again) == old  # resumed: the row sent while stopped
    assert [r["symbol"] for r in again.wait_for_rows(1)] == ["while"]
    runtime.stop("q")
    changed = plan_of(union_doc("q", ["in1"], "price > 1"))  # the same legacy fingerprint
    assert runtime.deploy("q", changed, Collector()) == fingerprint(changed) != old
