"""An output's end-to-end latency in its diagram's status, against a live server and Spark:
none before the output delivered anything, then at most what a subscriber observes; and its
last batch's time by Spark's phases."""

from __future__ import annotations

import time

from serverkit import Client, subscribed_to_positive, wait_until

from server.runtime import status


def progress(client: Client) -> dict:
    return client.call("GET", "/diagrams/q/status")["progress"]["outputs"]["out"]


def latency(client: Client):
    return progress(client)["latency_ms"]


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

    # where the last batch's time went, by Spark's phases, each within the batch's time
    last = progress(joe)
    phases = last["batch_phases_ms"]
    assert "latestOffset" in phases and set(phases) <= set(status.PHASES), phases
    assert all(0 <= ms <= last["batch_duration_ms"] for ms in phases.values()), last
    joe.close()
