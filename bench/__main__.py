"""``python -m bench [--quick | --smallest] [--scale K] [--only NAME,...]``: run the experiments,
print one table, write JSON to ``bench/results/``. ``--quick`` (``make bench``) takes a few
minutes on two cores; the full mode (``make bench-full``) uses more tuples and repetitions;
``--smallest`` runs each case once on the least data (what the test suite runs: a check that the
experiments still run, whose numbers mean nothing); ``--scale K`` runs K times the tuples per
batch.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
import traceback

from bench import report
from bench.harness import Mode

# name -> module; cheapest first, the live server last.
EXPERIMENTS = {
    "delivery": "bench.delivery_filter",
    "sp": "bench.punctuations",
    "setup": "bench.query_setup",
    "tuple": "bench.tuple_path",
    "sources": "bench.sources",
    "count_window": "bench.count_window",
    "levels": "bench.levels_table1",
    "rewrite": "bench.rewrite_time",
    "assist": "bench.ais_pruning",
    "e2e": "bench.end_to_end",
}


def scale(text: str) -> int:
    """A whole factor from 1 to 100 (bounded: a slip of the keyboard must not ask for hours)."""
    if not text.isdigit() or not 1 <= int(text) <= 100:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 1 to 100")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="fewer tuples and repetitions")
    size.add_argument(
        "--smallest",
        action="store_true",
        help="each case once on the least data: that every experiment still runs",
    )
    parser.add_argument(
        "--scale",
        type=scale,
        default=1,
        metavar="K",
        help="K times the tuples per batch (1-100): when a ratio's spread is wider than its goal",
    )
    parser.add_argument(
        "--only",
        default=",".join(EXPERIMENTS),
        help=f"comma-separated subset of {', '.join(EXPERIMENTS)}",
    )
    args = parser.parse_args(argv)
    chosen = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in chosen if n not in EXPERIMENTS]
    if unknown:
        parser.error(f"unknown experiment(s) {', '.join(unknown)}")
    mode = Mode(quick=args.quick or args.smallest, scale=args.scale, smallest=args.smallest)
    rows, goals, payload, failed = (
        [],
        [],
        {
            "machine": report.machine(),
            "quick": args.quick,
            "smallest": args.smallest,
            "scale": args.scale,
            "experiments": {},
        },
        [],
    )
    for name in chosen:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        start = time.perf_counter()
        try:
            result = importlib.import_module(EXPERIMENTS[name]).run(mode)
        except Exception:  # one broken experiment must not hide the others' numbers
            traceback.print_exc()
            failed.append(name)
            continue
        rows += result.rows
        goals += result.goals
        payload["experiments"][name] = {
            "seconds": time.perf_counter() - start,
            "rows": [r.to_dict() for r in result.rows],
            "goals": [vars(g) for g in result.goals],
            "extra": result.extra,
        }
    payload["machine"]["load_average_after"] = os.getloadavg()
    print(report.table(rows, goals))
    size = "smallest" if args.smallest else "quick" if args.quick else "full"
    path = report.write(size, payload)
    print(
        f"\nresults: {path}; load average before {payload['machine']['load_average']}, "
        f"after {payload['machine']['load_average_after']}"
    )
    if failed:
        print(f"FAILED: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
