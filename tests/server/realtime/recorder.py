"""A transport for delivery without sockets (``server.realtime.rooms.Transport``): it keeps
rooms as socket.io does and records what each socket would receive, a room's events once per
socket in it; ``frames`` counts what was sent, a room's event once."""

from __future__ import annotations


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, dict]] = []  # (socket, event, data)
        self.rooms: dict[str, set[str]] = {}
        self.frames = 0

    def emit(self, event: str, data: dict, to: str) -> None:
        self.frames += 1
        for sid in sorted(self.rooms.get(to, {to})):
            self.events.append((sid, event, data))

    def enter_room(self, sid: str, room: str) -> None:
        self.rooms.setdefault(room, set()).add(sid)

    def leave_room(self, sid: str, room: str) -> None:
        self.rooms.get(room, set()).discard(sid)

    def room_of(self, sid: str) -> set[str]:
        """The rooms ``sid`` is in."""
        return {room for room, sids in self.rooms.items() if sid in sids}
