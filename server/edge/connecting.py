"""The edge's sockets that are open (engine.io) but not yet connected (socket.io).

Such a socket has shown no session, so no user's cap counts it (the app counts sockets per user
and address at the socket.io connect: ``server.realtime.sockets.Connections``). Left alone, one
client could hold any number of them, each kept alive with heartbeats. So the edge bounds them
itself: one client address may hold ``max_connecting_per_address`` at once (one more is refused
at the engine.io handshake, before any socket exists), and each must send its socket.io connect
within ``socket_connect_seconds`` of opening. A socket stays counted here until the app accepts
its connect, or it ends.
"""

from __future__ import annotations

import time
from collections import Counter

from boxes import codes
from boxes.errors import TooMany


class Connecting:
    """The not-yet-connected sockets, per client address, with the time each opened."""

    def __init__(self, per_address: int, seconds: float) -> None:
        self.per_address, self.seconds = per_address, seconds
        self._address: dict[str, str] = {}  # sid: client address, until the app accepts it
        self._count: Counter[str] = Counter()
        self._since: dict[str, float] = {}  # sid: when it opened, until its connect came

    def open(self, sid: str, address: str) -> None:
        """Count a new socket of ``address``; refused with ``TooMany`` beyond the cap."""
        if self._count[address] >= self.per_address:
            raise TooMany(code=codes.TOO_MANY_CONNECTING, address=address, limit=self.per_address)
        self._address[sid] = address
        self._count[address] += 1
        self._since[sid] = time.monotonic()

    def __contains__(self, sid: str) -> bool:
        return sid in self._address

    def arrived(self, sid: str) -> None:
        """Its socket.io connect came: no deadline now, still counted until the app answers."""
        self._since.pop(sid, None)

    def end(self, sid: str) -> None:
        """Accepted by the app, refused, or gone: no longer counted."""
        self._since.pop(sid, None)
        address = self._address.pop(sid, None)
        if address is not None:
            self._count[address] -= 1
            if self._count[address] <= 0:
                del self._count[address]

    def overdue(self) -> list[str]:
        """The sockets whose connect did not come in time, each named once (the oldest are
        first: sockets are added in the order they open)."""
        late, limit = [], time.monotonic() - self.seconds
        for sid, since in self._since.items():
            if since > limit:
                break
            late.append(sid)
        for sid in late:
            del self._since[sid]
        return late
