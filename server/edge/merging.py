"""Result frames that waited together at the edge leave as one event per audience.

While the edge writes one batch to thousands of sockets, the app's next batches wait on the
channel (in real-time mode one arrives per tuple). Written one by one, each would cost every
socket of its audience a write and its client a read. Taken together, the ``tuples`` events
of one output to the same sockets become one event: their tuples in order, the ``batch``,
``next`` and ``log`` of the last (``next`` is where a reader resumes after it, so a merged
event is read back exactly as its parts would be). Each socket thus receives what it would
have received, in the order it would have, in fewer events.

Only consecutive result fan-outs merge (``runs``): any other frame (an ack, a ``policy`` or
``missed`` event, a close) keeps its place between them. A socket that two audiences of one
output reach within a run (it moved between them) gets that run unmerged, in order.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from socketio import packet as sio_packet

from server.edge import frames

Frame = dict[str, Any]


def is_result(frame: Frame) -> bool:
    """A fan-out of one output's ``tuples`` event (``server.edge.link.FanOut``)."""
    return frame["op"] == "fanout" and frame.get("output") is not None


def runs(taken: list[Frame]) -> Iterator[list[Frame]]:
    """``taken`` in order, consecutive result fan-outs together, every other frame alone."""
    run: list[Frame] = []
    for frame in taken:
        if is_result(frame):
            run.append(frame)
            continue
        if run:
            yield run
            run = []
        yield [frame]
    if run:
        yield run


def in_order(taken: list[Frame]) -> Iterator[Frame]:
    """``taken`` as the edge applies it, in order: each run of result fan-outs ``merged``,
    every other frame as it came."""
    for run in runs(taken):
        yield from merged(run) if is_result(run[0]) else run


def merged(run: list[Frame]) -> list[Frame]:
    """A run of result fan-outs with those of one output to the same sockets as one frame
    each (in the order of their first), or the run as it came if some socket would then get
    one output's events in another order."""
    groups: dict[tuple[str, tuple[str, ...]], list[Frame]] = {}
    for frame in run:
        groups.setdefault((frame["output"], tuple(frame["sids"])), []).append(frame)
    if len(groups) == len(run) or not _apart(groups):
        return run
    out: list[Frame] = []
    for same in groups.values():
        out.extend(_joined(same))
    return out


def _apart(groups: dict[tuple[str, tuple[str, ...]], list[Frame]]) -> bool:
    """Whether no socket is in two groups of one output."""
    seen: dict[str, set[str]] = {}
    for output, sids in groups:
        held = seen.setdefault(output, set())
        if not held.isdisjoint(sids):
            return False
        held.update(sids)
    return True


def _joined(same: list[Frame]) -> list[Frame]:
    """Frames of one output to the same sockets as one, if they are ``tuples`` events of one
    namespace and one result log; else as they are."""
    if len(same) == 1:
        return same
    events = [sio_packet.Packet(encoded_packet=frames.unwire(f["data"])) for f in same]
    first = events[0]
    if not all(_is_tuples(e) and e.namespace == first.namespace for e in events) or any(
        e.data[1].get("log") != first.data[1].get("log") for e in events
    ):
        return same
    data = {**events[-1].data[1], "tuples": [t for e in events for t in e.data[1]["tuples"]]}
    one = sio_packet.Packet(sio_packet.EVENT, namespace=first.namespace, data=["tuples", data])
    return [{**same[-1], "data": frames.wire(one.encode())}]


def _is_tuples(event: sio_packet.Packet) -> bool:
    data = event.data
    return (
        event.packet_type == sio_packet.EVENT
        and isinstance(data, list)
        and len(data) == 2
        and data[0] == "tuples"
        and isinstance(data[1], dict)
        and isinstance(data[1].get("tuples"), list)
    )
