"""A standby passes requests on to the runtime's holder (server/http/forward.py) over kept-alive
connections: a stand-in holder on loopback that keeps connections open (HTTP/1.1) records from
which of the standby's connections each request came."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler
from types import SimpleNamespace

import pytest
from loopback import LoopbackServer

from catalog import Catalog
from server.control.lease import LEASE
from server.http.forward import FORWARDED, pass_on


class KeepAliveHolder:
    """Answers every request 200 with its body, noting the client's (host, port)."""

    def __init__(self) -> None:
        self.peers: list[tuple[str, int]] = []
        holder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # the connection stays open between requests

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                holder.peers.append(self.client_address)
                self.send_response(200 if self.headers.get(FORWARDED) == "1" else 400)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_) -> None:
                pass

        self.loopback = LoopbackServer(Handler)
        self.url = self.loopback.url
        self.stop = self.loopback.stop


@pytest.fixture
def standby():
    """A server's services as ``pass_on`` needs them: a catalog naming the holder's address."""
    holder = KeepAliveHolder()
    catalog = Catalog.open("sqlite:///:memory:", bcrypt_rounds=4)
    catalog.leases.take(LEASE, "elsewhere", 600, holder.url)
    yield SimpleNamespace(catalog=catalog), holder
    catalog.close()
    holder.stop()


def test_appends_passed_on_share_one_kept_alive_connection(standby):
    svc, holder = standby
    for n in range(3):
        body = f'[{{"n": {n}}}]'.encode()
        answer = pass_on(
            svc, "POST", "/api/v1/streams/in1/tuples", {"Authorization": "Bearer t"}, body
        )
        assert answer is not None and (answer.status, answer.body) == (200, body)
    assert len(holder.peers) == 3 and len(set(holder.peers)) == 1
