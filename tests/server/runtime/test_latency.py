"""An output's end-to-end latency in its diagram's status, against a live server and Spark:
none before the output delivered anything, then at most what a subscriber observes."""

from __future__ import annotations

import time

from serverkit import Client, subscribed_to_positive, wait_until


def latency(client: Client):
    return client.call("GET", "/diagrams/q/status")["progress"]["outputs"]["out"]["latency_ms"]


def test_latency_runs_from_the_acknowledgement_to_delivery_and_is_none_before_results(live):
    joe = subscribed_to_positive(live.url)
    assert latency(joe) is None

    # The acknowledgement comes after the request is sent: the server's latency, which ends
    # before the tuple is emitted, must fit between sending and the socket's receipt.
    sent = time.monotonic()
    joe.call("POST", "/streams/in1/tuples", json=[{"x": 1}])
    wait_until(lambda: joe.arrivals, 120, "the result on the socket")
    observed_ms = (joe.arrivals[0] - sent) * 1000
    assert 0 < latency(joe) <= observed_ms
    joe.close()
