"""The SecFilter at delivery, against the real catalog: each batch is filtered with the
subscriber's permissions as they are when the batch arrives (the paper's Figure 10)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from boxes.secfilter import label_array
from catalog import Action, ObjectType
from server.realtime.delivery import ENDED_EVENT, TUPLES_EVENT, Delivery, Labels

T, A = ObjectType, Action
LABELS = {"in1": 1, "in2": 2, "both": 3}


def batch(*labels: str) -> pa.Table:
    """One aggregate row per label, named after it."""
    return pa.table(
        {
            "symbol": list(labels),
            "n": list(range(len(labels))),
            "_label": label_array([np.array([LABELS[name] for name in labels], np.uint64)]),
        }
    )


class Sent:
    def __init__(self) -> None:
        self.events = []

    def __call__(self, event, data, to):
        self.events.append((to, event, data))

    def take(self) -> dict:
        """What each socket got since the last call: symbols and their sources."""
        out = {}
        for to, event, data in self.events:
            if event == TUPLES_EVENT:
                out.setdefault(to, []).extend((t["symbol"], t["_sources"]) for t in data["tuples"])
            else:
                out.setdefault(to, []).append((event, data["error"]["code"]))
        self.events.clear()
        return out


@pytest.fixture
def setup(app, template):
    cat = app.extensions["sluice"].catalog
    sent = Sent()
    delivery = Delivery(cat, sent)
    sources = {s: cat.core.snapshot.find(T.STREAM, s).source_index for s in ("in1", "in2")}
    delivery.register({"out1": None}, Labels(("in1", "in2"), sources))
    tokens = template[2]
    who = {user: cat.sessions.resolve(tokens[user]) for user in tokens}
    return cat, delivery, sent, who


ALL = batch("in1", "in2", "both")


def test_the_papers_scenario_at_delivery(setup):
    cat, delivery, sent, who = setup
    delivery.subscribe("al-socket", who["al"], "out1")
    delivery.on_batch("out1", ALL)
    assert sent.take() == {
        "al-socket": [("in1", ["in1"]), ("in2", ["in2"]), ("both", ["in1", "in2"])]
    }
    cat.grants.grant(who["joe"], "CUSTOMER2", A.VIEW_OBJECT, T.SCHEMA, "s")
    cat.grants.grant(who["joe"], "CUSTOMER2", A.READ_TUPLE, T.STREAM, "in1")
    for action in (A.VIEW_OBJECT, A.SUBSCRIBE):
        cat.grants.grant(who["al"], "CUSTOMER2", action, T.OUTPUT, "out1")
    delivery.subscribe("bob-socket", who["bob"], "out1")
    delivery.on_batch("out1", ALL)
    assert sent.take()["bob-socket"] == [("in1", ["in1"])]
    cat.grants.revoke(who["joe"], "CUSTOMER2", A.READ_TUPLE, T.STREAM, "in1")
    delivery.on_batch("out1", ALL)
    assert sent.take() == {
        "al-socket": [("in1", ["in1"]), ("in2", ["in2"]), ("both", ["in1", "in2"])]
    }


def test_losing_subscribe_ends_the_subscription(setup):
    cat, delivery, sent, who = setup
    delivery.subscribe("ed-socket", who["ed"], "out1")
    cat.grants.revoke(who["al"], "INFO_PROVIDER", A.SUBSCRIBE, T.OUTPUT, "out1")
    delivery.on_batch("out1", ALL)
    delivery.on_batch("out1", ALL)
    assert sent.take() == {"ed-socket": [(ENDED_EVENT, "PERMISSION_DENIED")]}


@pytest.mark.parametrize("end", ["logout", "disable"])
def test_an_ended_session_gets_nothing(setup, end):
    cat, delivery, sent, who = setup
    delivery.subscribe("al-socket", who["al"], "out1")
    if end == "logout":
        cat.sessions.logout(who["al"])
    else:
        cat.accounts.set_enabled(who["joe"], "al", False)
    delivery.on_batch("out1", ALL)
    assert sent.take() == {"al-socket": [(ENDED_EVENT, "UNAUTHENTICATED")]}


def test_recent_results_are_filtered_for_the_asker(setup):
    cat, delivery, sent, who = setup
    assert [r["symbol"] for r in delivery.visible_rows(who["al"], "out1", ALL)] == [
        "in1",
        "in2",
        "both",
    ]
    assert delivery.visible_rows(who["bob"], "out1", ALL) == []
