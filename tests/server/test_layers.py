"""Imports inside ``server/`` point down the layers (or stay within one), never up.

Every import counts, those under ``TYPE_CHECKING`` and inside functions too: they hide a
dependency from Python, not from whoever changes the lower module. Modules of one layer may
import each other (tests/server/runtime/test_import_cycles.py keeps the runtime's acyclic).
"""

from __future__ import annotations

import ast
from pathlib import Path

import server

SERVER = Path(server.__file__).parent

# Top first; a module is in the layer of the package (or module) it is or is in. A new
# package must be placed here before it can import or be imported.
LAYERS = (
    ("server.cli", "server.app"),  # entry points and the composition root
    ("server.http", "server.realtime", "server.edge", "server.services"),  # the transports
    ("server.control",),  # catalog and runtime changes as one intent each
    ("server.ingest", "server.runtime"),
    ("server.limits",),  # the counts several servers share: logins, ingestion rate
    ("server.settings",),
)


def rank(module: str) -> int:
    """The layer of ``module`` (0 is the top)."""
    for level, entries in enumerate(LAYERS):
        if any(module == entry or module.startswith(entry + ".") for entry in entries):
            return level
    raise AssertionError(f"{module} is in no layer of LAYERS")


def imported(path: Path, here: str) -> set[str]:
    """The ``server`` modules a file of the package ``here`` imports, anywhere in it (a
    relative import read from ``here``; ``from server import m`` names ``server.m``)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            parts = here.split(".")[: len(here.split(".")) + 1 - node.level] if node.level else []
            base = ".".join([*parts, *([node.module] if node.module else [])])
            if base.count(".") == 0:
                names |= {f"{base}.{a.name}" for a in node.names}
            else:
                names.add(base)
    return {n for n in names if n.startswith("server.")}


def upward(root: Path, package: str) -> list[str]:
    """Each import in the package ``package`` at ``root`` of a module in a higher layer."""
    found = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        here = ".".join((package, *parts[:-1]))
        module = here if parts[-1] == "__init__" else f"{here}.{parts[-1]}"
        if module == package:
            continue
        found += [
            f"{module} imports {name}"
            for name in sorted(imported(path, here))
            if rank(name) < rank(module)
        ]
    return found


def test_server_imports_point_down():
    assert upward(SERVER, "server") == []


def test_an_upward_import_is_found_under_type_checking_or_in_a_function(tmp_path):
    (tmp_path / "settings").mkdir()
    (tmp_path / "settings" / "limits.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from server.services import S\n"
    )
    (tmp_path / "control").mkdir()
    (tmp_path / "control" / "x.py").write_text("def f():\n    import server.http.guard\n")
    (tmp_path / "ingest").mkdir()
    (tmp_path / "ingest" / "z.py").write_text("from server import app\nfrom ..control import y\n")
    (tmp_path / "http").mkdir()
    (tmp_path / "http" / "y.py").write_text("from server.realtime import sockets\n")
    assert upward(tmp_path, "server") == [
        "server.control.x imports server.http.guard",
        "server.ingest.z imports server.app",
        "server.ingest.z imports server.control",
        "server.settings.limits imports server.services",
    ]
