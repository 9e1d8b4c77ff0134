"""No module of ``server/runtime`` imports, however indirectly, one that imports it back:
every import counts, those under ``TYPE_CHECKING`` and inside functions too, since they only
hide a cycle from Python, not from whoever changes the code."""

from __future__ import annotations

import ast
from pathlib import Path

import server.runtime

RUNTIME = Path(server.runtime.__file__).parent


def imports(package: Path, name: str) -> dict[str, set[str]]:
    """Per module of the package ``name`` in ``package``, the package's modules it imports
    (``from pkg import mod`` names the module ``mod``; the package itself is its
    ``__init__``)."""
    modules = {
        f"{name}.{p.stem}" if p.stem != "__init__" else name: p for p in package.glob("*.py")
    }
    found: dict[str, set[str]] = {}
    for module, path in modules.items():
        edges = found.setdefault(module, set())
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                edges |= {a.name for a in node.names if a.name in modules}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    whole = f"{node.module}.{alias.name}"
                    if whole in modules:
                        edges.add(whole)
                    elif node.module in modules:
                        edges.add(node.module)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each import cycle, as the modules along it (one path per cycle found, depth first)."""
    found, done, path = [], set(), []

    def visit(module: str) -> None:
        if module in path:
            found.append(path[path.index(module) :] + [module])
            return
        if module in done:
            return
        path.append(module)
        for imported in sorted(graph.get(module, ())):
            visit(imported)
        path.pop()
        done.add(module)

    for module in sorted(graph):
        visit(module)
    return found


def test_the_runtime_has_no_import_cycle():
    graph = imports(RUNTIME, "server.runtime")
    assert "server.runtime.execution" in graph["server.runtime.runner"]  # the walk sees edges
    assert cycles(graph) == []


def test_a_cycle_closed_through_type_checking_or_a_function_is_found(tmp_path):
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p.b import B\n"
    )
    (tmp_path / "b.py").write_text("def f():\n    from p import c\n")
    (tmp_path / "c.py").write_text("import p.a\n")
    assert cycles(imports(tmp_path, "p")) == [["p.a", "p.b", "p.c", "p.a"]]
