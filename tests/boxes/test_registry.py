"""The box registry: one module per type, duplicate names refused, declarations served as JSON."""

from __future__ import annotations

import importlib
import json

import pytest

from boxes import registry
from boxes.base import Box
from boxes.errors import Conflict, NotFound

TYPES = ["input", "filter", "map", "union", "aggregate", "join", "output"]


def test_every_box_type_is_registered_from_its_own_module():
    assert registry.names() == TYPES
    for name in TYPES:
        assert registry.get(name).__module__ == importlib.import_module(f"boxes.{name}").__name__


def test_a_duplicate_type_name_is_refused():
    class Twin(Box):
        type_name = "filter"

    with pytest.raises(Conflict) as err:
        registry.register(Twin)
    assert err.value.code == "DUPLICATE_BOX_TYPE"
    assert registry.get("filter") is not Twin


def test_an_unknown_type_is_not_found():
    with pytest.raises(NotFound) as err:
        registry.get("sieve")
    assert err.value.code == "UNKNOWN_BOX_TYPE"


def test_declarations_are_json_for_the_editor():
    declarations = json.loads(json.dumps(registry.declarations()))
    by_type = {d["type"]: d for d in declarations}
    assert list(by_type) == TYPES
    window = next(p for p in by_type["aggregate"]["params"] if p["name"] == "window")
    assert window["kind"] == "window" and window["type"] == "object"
    assert [(p["name"], p["kind"], p["required"]) for p in window["params"]] == [
        ("size", "duration", False),
        ("rows", "count", False),
        ("partitioned", "flag", False),
        ("slide", "slide", False),
    ]
    assert {p["name"]: p["kind"] for p in by_type["filter"]["params"]} == {
        "in": "input ref",
        "where": "predicate",
    }
    assert {p["name"]: p["default"] for p in by_type["input"]["params"]} == {
        "schema": None,
        "lateness": "0s",
        "output": None,
    }
    for declaration in declarations:
        assert declaration["description"]
        for param in declaration["params"]:
            assert set(param) >= {"name", "type", "kind", "required", "default", "description"}
