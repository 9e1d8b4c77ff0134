"""A slow spell loses a subscriber nothing (issue 20): when delivery falls behind and the
output's tap queue overflows, the subscriber is told which positions it missed, reads them
back from the result log, and ends with every result exactly once."""

from __future__ import annotations

import threading

from runtime_helpers import TRADE, WAIT, plan_of, union_doc, wait_until

from catalog import ObjectType
from server.realtime.delivery import MISSED_EVENT, TUPLES_EVENT, Delivery, Labels
from tests.server.realtime.recorder import Recorder


class Socket(Recorder):
    """What one subscriber's socket receives."""

    def of(self, kind: str) -> list[dict]:
        return [data for _, event, data in self.events if event == kind]


def test_a_subscriber_told_what_it_missed_reads_it_back_and_has_every_result_once(
    make_runtime, app, template
):
    catalog = app.extensions["sluice"].catalog
    al = catalog.sessions.resolve(template[2]["al"])
    socket = Socket()
    delivery = Delivery(catalog, socket)
    in1 = catalog.core.snapshot.find(ObjectType.STREAM, "in1").source_index
    delivery.register({"out1": None}, Labels(("in1",), {"in1": in1}))
    delivery.subscribe("al-socket", al, "out1")

    runtime = make_runtime(tap_queue=1)  # delivery may fall one batch behind, then loses
    runtime.create_stream("in1", TRADE)
    slow_spell = threading.Event()

    def deliver(output, table):  # delivery stuck (a slow socket) until the spell ends
        slow_spell.wait(WAIT)
        delivery.on_batch(output, table)

    doc = union_doc("slow", ["in1"])
    doc["outputs"] = {"out1": {"from": "in1"}}
    runtime.deploy("slow", plan_of(doc), deliver)
    sent = []
    for i in range(8):  # one batch each: wait until each is in the result log
        sent.append(f"t{i}")
        runtime.append("in1", [{"symbol": f"t{i}", "price": 1.0}])
        wait_until(
            lambda: runtime.status("slow")["outputs"]["out1"]["next_position"] == len(sent),
            what=f"batch {i} in the result log",
        )
    assert runtime.status("slow")["outputs"]["out1"]["dropped_batches"] > 0
    slow_spell.set()
    sent.append("last")
    runtime.append("in1", [{"symbol": "last", "price": 1.0}])
    wait_until(
        lambda: any(t["symbol"] == "last" for e in socket.of(TUPLES_EVENT) for t in e["tuples"]),
        what="the batch after the slow spell",
    )

    (missed,) = socket.of(MISSED_EVENT)
    read = runtime.results("out1", missed["from"], missed["to"] - missed["from"])
    assert read.next == missed["to"]
    caught_up = [r["symbol"] for t in read.tables for r in delivery.visible_rows(al, "out1", t)]
    live = [t["symbol"] for e in socket.of(TUPLES_EVENT) for t in e["tuples"]]
    assert sorted(live + caught_up) == sorted(sent)  # every result, and none twice
