"""How the catalog's costs grow with its size, for ``docs/scaling.md``: a catalog filled to
``--streams`` input streams and ``--roles`` roles (each may READ_TUPLE ``--reads`` random
streams), in steps, with at each step the median cost of adding a stream, of a grant, of a
subscriber's rights as the delivery reads them at every batch, and the process's memory.

    python -m bench.catalog_scale [--streams 10000] [--roles 1000] [--reads 10] [--steps 5]
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from catalog import Action, Catalog, ObjectType
from catalog.bootstrap import add_admin

PASSWORD = "benchmark password"
SAMPLES = 50


def median_ms(work: Callable[[int], object], start: int) -> float:
    """Median milliseconds of ``work(i)`` for ``SAMPLES`` consecutive indexes from ``start``."""
    costs = []
    for i in range(start, start + SAMPLES):
        begin = time.perf_counter()
        work(i)
        costs.append(time.perf_counter() - begin)
    return statistics.median(costs) * 1e3


def measure(streams: int, roles: int, reads: int, steps: int) -> list[tuple]:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        cat = Catalog.open(f"sqlite:///{Path(tmp) / 'scale.db'}", bcrypt_rounds=4)
        try:
            add_admin(cat, "joe", PASSWORD)
            joe = cat.sessions.login("joe", PASSWORD)[1]
            cat.objects.add_schema(joe, "s", {"fields": {"x": "long"}})
            for r in range(roles):
                cat.accounts.add_role(joe, f"r{r}")
            cat.accounts.add_user(joe, "u", PASSWORD, [f"r{r}" for r in range(min(roles, 10))])
            subscriber = cat.sessions.login("u", PASSWORD)[1]
            rows, made, grants = [], 0, 0
            for step in range(1, steps + 1):
                target = streams * step // steps - SAMPLES
                while made < target:
                    cat.objects.add_stream(joe, f"in{made}", "s")
                    made += 1
                add = median_ms(lambda i: cat.objects.add_stream(joe, f"in{i}", "s"), made)
                made += SAMPLES
                while grants < reads * roles * step // steps:
                    role, stream = f"r{grants % roles}", f"in{rng.randrange(made)}"
                    cat.grants.grant(joe, role, Action.READ_TUPLE, ObjectType.STREAM, stream)
                    grants += 1
                newest = f"in{made - 1}"  # granted to no role yet: every sample is a write
                grant = median_ms(
                    lambda i: cat.grants.grant(
                        joe, f"r{i % roles}", Action.READ_TUPLE, ObjectType.STREAM, newest
                    ),
                    grants,
                )
                grants += SAMPLES
                rights = median_ms(lambda i: cat.sessions.source_rights(subscriber), 0)
                memory = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                rows.append((made, grants, add, grant, rights * 1e3, memory))
            return rows
        finally:
            cat.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=10_000)
    parser.add_argument("--roles", type=int, default=1_000)
    parser.add_argument("--reads", type=int, default=10)
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"catalog growth: {args.roles} roles, {args.reads} READ_TUPLE grants each; medians")
    print(
        f"{'streams':>8} {'grants':>7} {'add stream ms':>14} {'grant ms':>9} "
        f"{'rights µs':>10} {'max RSS MiB':>12}"
    )
    for made, grants, add, grant, rights, memory in measure(
        args.streams, args.roles, args.reads, args.steps
    ):
        print(f"{made:>8} {grants:>7} {add:>14.2f} {grant:>9.2f} {rights:>10.1f} {memory:>12.0f}")


if __name__ == "__main__":
    main()
