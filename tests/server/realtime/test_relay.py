"""The results relay's messages (server/realtime/relay.py) on a real Redis: a batch crosses with
its position, label layout and rewrite; a rewritten diagram's variant with the output it stands
for."""

from __future__ import annotations

import pyarrow as pa
import redis

from boxes.labels import LABEL_COLUMN
from server.realtime.delivery import Delivery, Labels
from server.realtime.relay import CHANNEL, Relay, decode, encode
from server.runtime.outputs import NEXT_KEY
from tests.server.realtime.recorder import Recorder

LABELS = Labels(("in1", "in2"), {"in1": 3, "in2": 7})


def batch() -> pa.Table:
    table = pa.table({"price": [1.0, 2.0], LABEL_COLUMN: pa.array([1, 2], pa.int64())})
    return table.replace_schema_metadata({NEXT_KEY: b"42"})


def test_a_batch_crosses_with_its_position_labels_semantic_and_rewrite():
    message = encode("out.v-k1", batch(), LABELS, "weak", "k1", "out")
    route, table, labels, semantic, rewrite, public = decode(message)
    assert (route, labels, semantic, rewrite, public) == ("out.v-k1", LABELS, "weak", "k1", "out")
    assert table.equals(batch()) and table.schema.metadata[NEXT_KEY] == b"42"


def test_outputs_and_variants_are_published_with_their_rewrite(redis_url):
    delivery = Delivery(catalog=None, transport=Recorder())
    delivery.register({"out": None}, LABELS)
    gate = lambda who, output, start: output  # noqa: E731
    delivery.register({"ruled": None}, LABELS, gate=gate, rewrite="k1")
    public = {"ruled.v-k2": "ruled"}
    delivery.register({"ruled.v-k2": None}, LABELS, public=public, rewrite="k2")
    listener = redis.Redis.from_url(redis_url).pubsub(ignore_subscribe_messages=True)
    listener.psubscribe(CHANNEL + "*")
    relay = Relay(redis_url, delivery, holding=lambda: True)
    try:
        assert listener.get_message(timeout=1.0) is None  # the subscription is in place
        for route in ("ruled.v-k2", "ruled", "out"):
            relay.publish(route, batch())
        got = [listener.get_message(timeout=5.0) for _ in range(3)]
        assert [decode(m["data"])[0::4] for m in got if m] == [
            ("ruled.v-k2", "k2"),
            ("ruled", "k1"),
            ("out", None),
        ]
        assert [decode(m["data"])[5] for m in got if m] == ["ruled", "ruled", "out"]
    finally:
        listener.close()
        relay.client.close()


def test_a_batch_that_cannot_be_delivered_is_logged_and_the_next_still_is(redis_url, caplog):
    """A relayed batch this server cannot deliver (e.g. one a server of another version
    published) is logged; the relay's thread lives on and delivers the batches after it."""

    class Refusing:
        delivered: list[str] = []

        def adopt(self, *_) -> None:
            pass

        def on_batch(self, route: str, _table) -> None:
            if route == "bad":
                raise KeyError("sluice.log")
            self.delivered.append(route)

    relay = Relay(redis_url, Refusing(), holding=lambda: False)
    try:
        for route in ("bad", "out"):
            relay._received(encode(route, batch(), LABELS, "strong", None, route))
        assert Refusing.delivered == ["out"]
        assert "a relayed batch of bad could not be delivered" in caplog.text
    finally:
        relay.client.close()
