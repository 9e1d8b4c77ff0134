"""A built box's parameters as plain JSON values, the same in every process.

A plan's fingerprint names its checkpoint (``server/runtime/versions.py``), so it must change
with anything that changes what the plan computes (a filter's condition, an aggregate's
function, a window's size) and with nothing else; and it must come out the same after a
restart, whatever Python's hash seed made of a set's order. ``repr`` gives neither promise,
so a box's fields are turned into JSON here: expressions by their checked text, sets sorted.

>>> from boxes.punctuations.patterns import Pattern
>>> canonical({"b": frozenset({"y", "x"}), "a": (1.5, Pattern("any"))})
{'a': [1.5, {'kind': 'any', 'values': []}], 'b': ['x', 'y']}
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from enum import Enum
from typing import Any

from boxes.expressions import CheckedAggregate, CheckedExpr

LOCAL = "canonical_local"  # in a field's metadata: a value of this process (a cache), left out


def canonical(value: Any) -> Any:
    """``value`` as JSON: an expression or aggregate by its text, an enum by its value, a
    dataclass as a dict of its fields, a set as a sorted list. Anything else is refused, so
    a new kind of parameter is given a stable form here rather than fingerprinted by chance."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value.value if isinstance(value, Enum) else value
    if isinstance(value, (CheckedExpr, CheckedAggregate)):
        return value.text
    if isinstance(value, Enum):
        return canonical(value.value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = (f for f in dataclasses.fields(value) if not f.metadata.get(LOCAL))
        return {f.name: canonical(getattr(value, f.name)) for f in fields}
    if isinstance(value, Mapping):
        return {str(k): canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((canonical(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    raise TypeError(f"no canonical form for a {type(value).__name__} parameter")
