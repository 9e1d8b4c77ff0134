"""The ``sluice`` command. Each subcommand is one small function registered in ``COMMANDS``.

``sluice run DIAGRAM --input NAME=FILE.ndjson ... [--readable NAME,NAME]`` runs a diagram over
finite NDJSON files and prints one JSON object per output tuple.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from boxes.errors import SluiceError

RUN_HELP = """\
Run DIAGRAM over finite NDJSON files and print each output tuple as one JSON line: its fields,
"_output" (the output's name) and "_sources" (the sorted input names in its label).

The files are read completely and the compiled diagram runs once as a batch job, so every
window closes and nothing counts as late (a server streaming the same tuples drops tuples
that arrive behind the watermark). Timestamps are read and printed as ISO-8601 (UTC when no
offset is given); a number is read as seconds since the epoch. With --readable, only tuples
whose label lies within the named inputs are printed (the strong SecFilter).

Exit status: 0 on success, 2 when the diagram or an input file is invalid (every problem is
printed to stderr as "[CODE] path: message", and Spark is not started)."""


def _run_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "run",
        help="run a diagram over NDJSON files and print its results",
        description=RUN_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "diagram", help="the diagram document (YAML or JSON), or a CQL script (FILE.cql)"
    )
    p.add_argument(
        "--input",
        "-i",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="the NDJSON file for input NAME (repeat once per input)",
    )
    p.add_argument(
        "--readable",
        metavar="NAME,NAME",
        help="deliver only tuples derived from these inputs alone",
    )
    return p


def _run(args: argparse.Namespace) -> int:
    from server.cli.run import run_headless

    return run_headless(args.diagram, args.input, args.readable, sys.stdout, sys.stderr)


def _serve_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "serve",
        help="run the server (REST API, web pages, sockets, Spark)",
        description="Run the Sluice server. Settings: embedded defaults, then "
        "--config FILE (YAML), then SLUICE_* environment variables, then options.",
    )
    p.add_argument("--config", metavar="FILE", help="a YAML file of settings")
    p.add_argument(
        "--demo",
        action="store_true",
        default=None,
        help="seed the paper's scenario, feed it prices and deploy q1",
    )
    p.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="port to listen on (default 8080)")
    p.add_argument(
        "--log-level",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="the least severe log records written to stderr (default INFO)",
    )
    p.add_argument(
        "--log-format",
        choices=["text", "json"],
        help="json: one object a line, for log collectors (default text)",
    )
    return p


def _serve(args: argparse.Namespace) -> int:
    from server.cli.serve import serve

    given = {
        k: getattr(args, k)
        for k in ("demo", "host", "port", "log_level", "log_format")
        if getattr(args, k) is not None
    }
    return serve(args.config, given, sys.stdout)


def _user_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("user", help="add an administrator directly to the catalog")
    p.add_argument("action", choices=["add"])
    p.add_argument("name")
    p.add_argument(
        "--admin",
        action="store_true",
        required=True,
        help="make the user an administrator (other users are added over the API)",
    )
    p.add_argument("--config", metavar="FILE", help="a YAML file of settings")
    return p


def _user(args: argparse.Namespace) -> int:
    from server.cli.accounts import add_admin_user

    return add_admin_user(args.config, args.name, sys.stdin, sys.stdout)


# name -> (add the subparser, the function that runs it and returns the exit status)
COMMANDS: dict[str, tuple[Callable, Callable[[argparse.Namespace], int]]] = {
    "run": (_run_parser, _run),
    "serve": (_serve_parser, _serve),
    "user": (_user_parser, _user),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sluice", description="Secure stream processing on Spark")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add_parser, _ in COMMANDS.values():
        add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command][1](args)
    except SluiceError as err:
        print(err, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
