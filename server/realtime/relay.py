"""Results on every server (docs/deploy.md "Results on any server"): the runtime lease's holder
publishes each output batch on Redis; every other server filters it for its own subscribers.

A message carries the batch as the holder's delivery path has it (user fields, label columns,
its result-log position) with what filtering needs beside it: the output's label layout (which
input each bit stands for, and its catalog source) and its semantic. A receiving server decides
with *its own* view of the catalog, the same SecFilter, clearances and sp roles as the holder's
(``Delivery.on_batch``), so a revoke made anywhere filters the next batch everywhere. The label
never leaves the servers: Redis is between servers, like the catalog's database.

An output of a diagram that runs rewritten (docs/rewrite.md) is relayed with the fingerprint of
the rewrite its batches were computed under; a receiving server gives such a batch only to the
subscribers whose own policies rewrite the diagram that same way, with its catalog as it is then
(``server.realtime.standby.RewriteGuard``). A reader whose rewrite differs reads a variant,
which only the holder runs: a standby asks the holder to run it (and keeps asking while it
has readers of it), and the variant's batches are relayed like any output's, under its
runtime name with the output it stands for. Catching up from a position
(``subscribe`` with ``from``) reads the holder's result log through its REST API
(``server.realtime.standby``); the relayed batches follow, less those it covered.

Channels are ``sluice:results:<output>``; Redis pub/sub keeps a publisher's order, so each
output's batches arrive in order. A relay that cannot publish logs it and delivers locally all
the same; one that loses its subscription connects again.
"""

from __future__ import annotations

import json
import logging
import threading

import pyarrow as pa
import redis

from boxes.arrowipc import ipc_bytes
from server.realtime.delivery import Delivery, Labels

CHANNEL = "sluice:results:"
log = logging.getLogger(__name__)


def encode(
    route: str,
    table: pa.Table,
    labels: Labels,
    semantic: str,
    rewrite: str | None = None,
    public: str | None = None,
) -> bytes:
    header = {
        "route": route,
        "public": public or route,
        "inputs": list(labels.inputs),
        "sources": dict(labels.sources),
        "leveled": labels.leveled,
        "semantic": semantic,
        "rewrite": rewrite,
    }
    head = json.dumps(header).encode()
    return len(head).to_bytes(4, "big") + head + ipc_bytes(table)  # the position is metadata


def decode(message: bytes) -> tuple[str, pa.Table, Labels, str, str | None, str]:
    size = int.from_bytes(message[:4], "big")
    header = json.loads(message[4 : 4 + size])
    table = pa.ipc.open_stream(message[4 + size :]).read_all()
    labels = Labels(tuple(header["inputs"]), header["sources"], header.get("leveled", False))
    route, public = header["route"], header["public"]
    return route, table, labels, header["semantic"], header["rewrite"], public


class Relay:
    """One server's side: ``deliver`` is the runtime's tap callback when this server holds the
    runtime (publish, then deliver here); ``start`` listens for the batches of others."""

    def __init__(self, url: str, delivery: Delivery, holding) -> None:
        """``holding()``: whether this server runs the runtime now (it then delivers its own
        batches and ignores the relayed ones)."""
        self.delivery, self.holding = delivery, holding
        self.client = redis.Redis.from_url(url, socket_timeout=2.0, socket_connect_timeout=2.0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._listen, name="results-relay", daemon=True)

    def deliver(self, route: str, table: pa.Table) -> None:
        self.publish(route, table)
        self.delivery.on_batch(route, table)

    def publish(self, route: str, table: pa.Table) -> None:
        labels = self.delivery.labels(route)
        if labels is None or table.num_rows == 0:
            return
        try:
            delivery = self.delivery
            semantic, rewrite = delivery.semantic(route), delivery.rewrite_of(route)
            message = encode(route, table, labels, semantic, rewrite, delivery.public_of(route))
            self.client.publish(CHANNEL + route, message)
        except redis.RedisError:
            log.exception("output %s: a batch was not relayed to the other servers", route)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self.client.close()

    def _listen(self) -> None:
        while not self._stop.is_set():
            try:
                with self.client.pubsub(ignore_subscribe_messages=True) as pubsub:
                    pubsub.psubscribe(CHANNEL + "*")
                    while not self._stop.is_set():
                        message = pubsub.get_message(timeout=1.0)
                        if message is not None and not self.holding():
                            self._received(message["data"])
            except redis.RedisError:
                log.exception("the results relay lost Redis; subscribing again")
                self._stop.wait(1.0)

    def _received(self, data: bytes) -> None:
        try:
            route, table, labels, semantic, rewrite, public = decode(data)
        except Exception:
            log.exception("a relayed batch could not be read")
            return
        try:
            self.delivery.adopt(route, labels, semantic, rewrite, public)
            self.delivery.on_batch(route, table)
        except Exception:  # one batch's fault must not end the relay for every output after it
            log.exception("a relayed batch of %s could not be delivered", route)
