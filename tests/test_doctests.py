"""Every ``>>>`` example in the package runs, so the examples newcomers read stay true.

The modules are found by scanning for ``>>>``: a new example is run without being listed.
Examples in ``catalog`` share one namespace per module: a fresh in-memory catalog ``cat``
with the administrator ``joe`` and the stream ``in1``, as ``catalog.front``'s example builds.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

from catalog import Catalog
from catalog.bootstrap import add_admin

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("boxes", "catalog", "server")
MODULES = sorted(
    ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    for package in PACKAGES
    for path in (ROOT / package).rglob("*.py")
    if ">>> " in path.read_text(encoding="utf-8")
)


def _catalog_namespace() -> dict:
    cat = Catalog.open("sqlite:///:memory:", bcrypt_rounds=4)
    add_admin(cat, "joe", "correct horse battery")
    _, joe = cat.sessions.login("joe", "correct horse battery")
    cat.objects.add_schema(joe, "trade", {"fields": {"price": "double"}})
    cat.objects.add_stream(joe, "in1", "trade")
    return {"cat": cat, "joe": joe}


def test_the_scan_finds_the_examples():
    assert {"boxes.registry", "boxes.secfilter", "catalog.front"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name):
    module = importlib.import_module(name)
    extra = _catalog_namespace() if name.startswith("catalog.") else {}
    try:
        result = doctest.testmod(
            module, extraglobs=extra, optionflags=doctest.ELLIPSIS, verbose=False, report=True
        )
    finally:
        if "cat" in extra:
            extra["cat"].close()
    assert result.attempted > 0, f"{name} has '>>> ' but doctest found no example"
    assert result.failed == 0, f"{result.failed} example(s) of {name} failed (printed above)"
