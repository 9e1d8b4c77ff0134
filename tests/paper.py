"""The Borealis paper's q1 (its Figure 6) for every test: the demo's document is the one copy.

``Q1`` is the document as the demo deploys it (its inputs are the catalog's streams ``in1`` and
``in2``). ``q1()`` is a fresh copy to change; ``headless=True`` declares the demo's schema
``s`` in it, as ``sluice run`` and the box tests need without a catalog; ``as_yaml`` writes a
document as a person would.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import yaml

from catalog.bootstrap import DEMO_SCHEMA
from server.cli.demo import Q1


def q1(headless: bool = False, **sections: Mapping[str, Any]) -> dict:
    """A copy of q1; each of ``inputs``, ``boxes``, ``outputs`` given adds or replaces entries."""
    doc = copy.deepcopy(Q1)
    if headless:
        doc["schemas"] = {"s": copy.deepcopy(DEMO_SCHEMA)}
        doc["inputs"] = {name: {"schema": "s"} for name in doc["inputs"]}
    for section, entries in sections.items():
        doc[section].update(copy.deepcopy(dict(entries)))
    return doc


def as_yaml(doc: Mapping[str, Any]) -> str:
    """Block style with flow-style leaves (``in: [in1, in2]``), keys in the document's order."""
    return yaml.safe_dump(dict(doc), sort_keys=False, default_flow_style=None, width=100)
