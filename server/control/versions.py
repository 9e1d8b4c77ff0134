"""Two versions of a diagram side by side, and an old one made the newest again.

A comparison is by name, section by section (inputs, boxes, outputs): what the newer version
added, what it removed, and what it changed (the old and new definition of each); any other
top-level setting that differs (its level, its description) is a change too. Restoring a
version is replacing the diagram with that version's document (``lifecycle.replace``), so it
is checked as any new version is and becomes the newest, the replaced one staying listed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from catalog import Subject
from server.control import lifecycle

PARTS = ("inputs", "boxes", "outputs")


def compared(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """What changed from ``old`` to ``new`` (two documents).

    >>> a = {"name": "q", "boxes": {"f": {"type": "filter", "where": "x > 0"}}}
    >>> b = {"name": "q", "boxes": {"f": {"type": "filter", "where": "x > 1"}, "g": {}}}
    >>> compared(a, b)["added"], [c["name"] for c in compared(a, b)["changed"]]
    ([{'part': 'boxes', 'name': 'g'}], ['f'])
    """
    added, removed, changed = [], [], []
    for part in PARTS:
        before, after = old.get(part) or {}, new.get(part) or {}
        added += [{"part": part, "name": n} for n in sorted(set(after) - set(before))]
        removed += [{"part": part, "name": n} for n in sorted(set(before) - set(after))]
        changed += [
            {"part": part, "name": n, "from": before[n], "to": after[n]}
            for n in sorted(set(before) & set(after))
            if before[n] != after[n]
        ]
    for key in sorted((set(old) | set(new)) - set(PARTS)):
        if old.get(key) != new.get(key):
            changed.append(
                {"part": "settings", "name": key, "from": old.get(key), "to": new.get(key)}
            )
    return {"added": added, "removed": removed, "changed": changed}


def compare(svc, subject: Subject, name: str, old: int, new: int) -> dict[str, Any]:
    """Versions ``old`` and ``new`` of the diagram compared (VIEW_OBJECT on it)."""
    versions = svc.catalog.versions
    before, after = (_document(versions.get(subject, name, v)) for v in (old, new))
    return {"from": old, "to": new, **compared(before, after)}


def restore(svc, subject: Subject, name: str, version: int) -> lifecycle.Replaced:
    """Make ``version``'s document the diagram's newest version (running, if it runs)."""
    found = svc.catalog.versions.get(subject, name, version)
    return lifecycle.replace(svc, subject, name, {"document": _document(found)})


def _document(version) -> dict[str, Any]:
    return json.loads(version.spec) if version.spec else {}
