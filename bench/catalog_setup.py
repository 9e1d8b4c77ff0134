"""Query set-up cost of the object-level security, after the Borealis paper's Figure 11.

Queries 1 to 6 have the paper's sizes (Query 6: 6 schemas, 6 input streams, 128 boxes = 140
objects). For each, two numbers in milliseconds: the recursive check alone (pure decisions on
the snapshot) and the whole ``add_diagram`` (check, one transaction creating the diagram, its
boxes and output, and the new snapshot). ``--background N`` first fills the catalog with N
unrelated objects: a change's cost should not grow with them (it did while every change
re-read the whole catalog into its snapshot). ``--url`` runs it on another, empty, catalog
database (``postgresql://...``; default: a temporary SQLite file). Last, what one access to
the current snapshot costs, which every decision makes: on SQLite a look at the file's
``data_version``, on PostgreSQL none (notices arrive by LISTEN/NOTIFY).

    python -m bench.catalog_setup [--repeat 20] [--background 0] [--url URL]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from boxes import registry
from catalog import Action, Catalog, DiagramSpec, ObjectType
from catalog.authorizer import decide
from catalog.bootstrap import add_admin

QUERIES = {1: (1, 2), 2: (2, 4), 3: (3, 16), 4: (4, 32), 5: (5, 64), 6: (6, 128)}
PASSWORD = "benchmark password"


def setup(cat: Catalog, background: int):
    add_admin(cat, "joe", PASSWORD)
    joe = cat.sessions.login("joe", PASSWORD)[1]
    cat.accounts.add_role(joe, "CUSTOMER1")
    cat.accounts.add_user(joe, "al", PASSWORD, ["CUSTOMER1"])
    cat.grants.grant(joe, "CUSTOMER1", Action.ADD, ObjectType.SYSTEM, "system")
    for box_type in registry.operators():
        cat.grants.grant(joe, "CUSTOMER1", Action.USE, ObjectType.BOX_TYPE, box_type)
    for i in range(6):
        cat.objects.add_schema(joe, f"s{i}", {"fields": {"x": "long"}})
        cat.objects.add_stream(joe, f"in{i}", f"s{i}")
        cat.grants.grant(joe, "CUSTOMER1", Action.VIEW_OBJECT, ObjectType.SCHEMA, f"s{i}")
        for action in (Action.VIEW_OBJECT, Action.READ_TUPLE):
            cat.grants.grant(joe, "CUSTOMER1", action, ObjectType.STREAM, f"in{i}")
    al = cat.sessions.login("al", PASSWORD)[1]
    for i in range(0, background, 500):
        cat.objects.add_diagram(
            al, DiagramSpec(f"bg{i}", ("in0",), tuple(f"b{j}" for j in range(499)), (f"bgo{i}",))
        )
    return joe, al


def check_only(cat: Catalog, al, inputs: int) -> None:
    """The recursive check of ``add_diagram`` without the write: what the paper's overhead is."""
    snapshot = cat.core.snapshot
    decisions = [decide(al, Action.ADD, snapshot.system, snapshot)]
    for i in range(inputs):
        stream = snapshot.find(ObjectType.STREAM, f"in{i}")
        schema = snapshot.find(ObjectType.SCHEMA, f"s{i}")
        decisions += [
            decide(al, Action.VIEW_OBJECT, stream, snapshot),
            decide(al, Action.READ_TUPLE, stream, snapshot),
            decide(al, Action.VIEW_OBJECT, schema, snapshot),
        ]
    assert all(d.allowed for d in decisions)


def access_cost(cat: Catalog, accesses: int = 20_000, runs: int = 7) -> tuple[float, float]:
    """Microseconds per snapshot access: the median of ``runs`` and its interquartile range."""
    per_access = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(accesses):
            cat.core.snapshot  # noqa: B018 (the access is what is measured)
        per_access.append((time.perf_counter() - start) / accesses * 1e6)
    quartiles = statistics.quantiles(per_access, n=4)
    return statistics.median(per_access), quartiles[2] - quartiles[0]


def measure(
    repeat: int, background: int, url: str | None = None
) -> tuple[list[tuple[int, int, float, float]], tuple[float, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        cat = Catalog.open(url or f"sqlite:///{Path(tmp) / 'bench.db'}", bcrypt_rounds=4)
        try:
            joe, al = setup(cat, background)
            rows = []
            for q, (inputs, boxes) in QUERIES.items():
                spec = DiagramSpec(
                    f"q{q}",
                    tuple(f"in{i}" for i in range(inputs)),
                    tuple(f"b{j}" for j in range(boxes)),
                    (f"out{q}",),
                )
                checks, adds = [], []
                for _ in range(repeat):
                    start = time.perf_counter()
                    check_only(cat, al, inputs)
                    checks.append(time.perf_counter() - start)
                    start = time.perf_counter()
                    cat.objects.add_diagram(al, spec)
                    adds.append(time.perf_counter() - start)
                    cat.objects.drop(al, ObjectType.DIAGRAM, spec.name)
                rows.append(
                    (
                        q,
                        2 * inputs + boxes,
                        statistics.median(checks) * 1e3,
                        statistics.median(adds) * 1e3,
                    )
                )
            return rows, access_cost(cat)
        finally:
            cat.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--background", type=int, default=0)
    parser.add_argument("--url", help="an empty catalog database (default: a temporary file)")
    args = parser.parse_args(argv)
    print(
        f"catalog query set-up, median of {args.repeat}, "
        f"{args.background} other objects in the catalog"
    )
    print(f"{'query':>5} {'objects':>7} {'check ms':>9} {'add_diagram ms':>15}")
    rows, (access, spread) = measure(args.repeat, args.background, args.url)
    for q, objects, check, add in rows:
        print(f"{q:>5} {objects:>7} {check:>9.3f} {add:>15.2f}")
    print(f"snapshot access: {access:.2f} µs [IQR {spread:.2f}]")


if __name__ == "__main__":
    main()
