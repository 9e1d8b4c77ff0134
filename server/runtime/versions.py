"""A deployed diagram's version: what names its checkpoint, so the same plan resumes it and
a changed one starts afresh."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from boxes.document import Plan
from server.runtime import checkpoints


def fingerprint(plan: Plan) -> str:
    """A version for a plan: any change to its boxes (their parameters too), inputs or schemas
    gives a new checkpoint; nothing else does (``boxes/canonical.py``)."""
    return _digest({**_described(plan), "parameters": [box.parameters() for box in plan.boxes]})


def legacy_fingerprint(plan: Plan) -> str:
    """The version before boxes' parameters counted (a filter's new condition then kept the
    checkpoint): a diagram deployed then resumes where it was, once, under that version."""
    return _digest(_described(plan))


def _described(plan: Plan) -> dict[str, Any]:
    return {
        **plan.to_dict(),
        "schemas": {n: s.to_dict() for n, s in sorted(plan.input_schemas.items())},
    }


def _digest(described: Mapping[str, Any]) -> str:
    text = json.dumps(described, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def version_of(diagrams: checkpoints.Diagrams, diagram_id: str, plan: Plan) -> str:
    """``fingerprint(plan)``; but a diagram whose checkpoint was written under the
    ``legacy_fingerprint`` of this plan keeps that version, bound to this very plan (a
    changed one starts afresh as any does), so an upgrade resumes it where it was."""
    new, old = fingerprint(plan), legacy_fingerprint(plan)
    kept = {d.version: d for d in diagrams.versions(diagram_id)}
    legacy = kept.get(old)
    if new in kept or legacy is None or legacy.bound() not in (None, new):
        return new
    legacy.bind(new)
    return old
