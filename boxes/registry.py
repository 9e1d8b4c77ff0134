"""Box type name -> box class: the one place that knows which box types exist.

The editor's palette and property forms come from ``declarations()`` (served as JSON by the
server); the document validator resolves ``type:`` here. Registering a name twice is refused,
so a plug-in cannot silently replace a built-in box.

>>> get("filter").declaration()["params"][1]["kind"]
'predicate'
"""

from __future__ import annotations

from typing import Any

from boxes import codes
from boxes.aggregate import AggregateBox
from boxes.base import Box, Operator
from boxes.errors import Conflict, NotFound
from boxes.filter import FilterBox
from boxes.input import InputBox
from boxes.join import JoinBox
from boxes.map import MapBox
from boxes.output import OutputBox
from boxes.union import UnionBox

_REGISTRY: dict[str, type[Box]] = {}


def register(box_class: type[Box]) -> type[Box]:
    """Add a box type; a name already taken is a Conflict."""
    name = box_class.type_name
    if name in _REGISTRY:
        raise Conflict(code=codes.DUPLICATE_BOX_TYPE, details={"type": name}, name=name)
    _REGISTRY[name] = box_class
    return box_class


def get(name: str) -> type[Box]:
    """The class of a box type; NotFound if there is none."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise NotFound(code=codes.UNKNOWN_BOX_TYPE, details={"type": name}, name=name) from None


def names() -> list[str]:
    return list(_REGISTRY)


def operators() -> list[str]:
    """The types of boxes that work on tuples (not a diagram's inputs and outputs): what
    operator-based access control governs."""
    return [name for name, box_class in _REGISTRY.items() if issubclass(box_class, Operator)]


def declarations() -> list[dict[str, Any]]:
    """Every box type's parameter declaration, in palette order (JSON-ready)."""
    return [box_class.declaration() for box_class in _REGISTRY.values()]


for _box in (InputBox, FilterBox, MapBox, UnionBox, AggregateBox, JoinBox, OutputBox):
    register(_box)
