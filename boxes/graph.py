"""A diagram's graph, as names and the names each reads from: its order and its cycles.

Pure functions over ``{node: [upstream nodes]}``, apart from what the validator reports, so
the ordering rule is read (and tested) on its own.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping


def topological(upstream: Mapping[str, list[str]]) -> list[str]:
    """Kahn's algorithm, stable in document order; nodes on or after a cycle are left out."""
    waiting = {n: len(set(refs)) for n, refs in upstream.items()}
    downstream: dict[str, set[str]] = {n: set() for n in upstream}
    for n, refs in upstream.items():
        for ref in refs:
            downstream[ref].add(n)
    position = {n: i for i, n in enumerate(upstream)}
    ready = deque(n for n, count in waiting.items() if count == 0)
    order: list[str] = []
    while ready:
        n = ready.popleft()
        order.append(n)
        for m in sorted(downstream[n], key=position.__getitem__):
            waiting[m] -= 1
            if waiting[m] == 0:
                ready.append(m)
    return order


def find_cycle(
    start: str, upstream: Mapping[str, list[str]], placed: set[str], reported: set[str]
) -> list[str]:
    """Walk upstream from an unplaceable node until a name repeats: that loop is a cycle.

    Returned in data-flow order (``a`` feeds ``b`` feeds ``a``). Empty if the walk reaches a
    cycle already reported (the node only lies downstream of it).
    """
    path: list[str] = []
    current = start
    while current not in path:
        if current in reported:
            return []
        path.append(current)
        current = next(r for r in upstream[current] if r not in placed)
    cycle = path[path.index(current) :]
    return list(reversed(cycle))
