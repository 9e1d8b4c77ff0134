"""The results relay's messages (server/realtime/relay.py) on a real Redis: a batch crosses with
its position and label layout; an output a rewrite governs does not cross at all."""

from __future__ import annotations

import pyarrow as pa
import redis

from boxes.labels import LABEL_COLUMN
from server.realtime.delivery import Delivery, Labels
from server.realtime.relay import CHANNEL, Relay, decode, encode
from server.runtime.outputs import NEXT_KEY

LABELS = Labels(("in1", "in2"), {"in1": 3, "in2": 7})


def batch() -> pa.Table:
    table = pa.table({"price": [1.0, 2.0], LABEL_COLUMN: pa.array([1, 2], pa.int64())})
    return table.replace_schema_metadata({NEXT_KEY: b"42"})


def test_a_batch_crosses_with_its_position_labels_and_semantic():
    route, table, labels, semantic = decode(encode("out", batch(), LABELS, "weak"))
    assert (route, labels, semantic) == ("out", LABELS, "weak")
    assert table.equals(batch()) and table.schema.metadata[NEXT_KEY] == b"42"


def test_only_outputs_no_rewrite_governs_are_published(redis_url):
    delivery = Delivery(catalog=None, emit=lambda *a, **k: None)
    delivery.register({"out": None}, LABELS)
    delivery.register({"ruled": None}, LABELS, gate=lambda who, output, start: output)
    listener = redis.Redis.from_url(redis_url).pubsub(ignore_subscribe_messages=True)
    listener.psubscribe(CHANNEL + "*")
    relay = Relay(redis_url, delivery, holding=lambda: True)
    try:
        assert listener.get_message(timeout=1.0) is None  # the subscription is in place
        relay.publish("ruled", batch())
        relay.publish("out", batch())
        message = listener.get_message(timeout=5.0)
        assert message is not None and message["channel"] == (CHANNEL + "out").encode()
        assert decode(message["data"])[0] == "out"
        assert listener.get_message(timeout=0.5) is None  # "ruled" never came
    finally:
        listener.close()
        relay.client.close()
