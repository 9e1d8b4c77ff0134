"""JSON Schema pieces the blueprints share: request bodies (checked by the guard) and answers
(shown in OpenAPI and checked by the API fuzz), so a client and the server read one rule.

A piece may name the error code (``x-code``) that answers a value of the right JSON type that
it refuses: a bad name is ``INVALID_NAME`` whether the guard or the catalog finds it.
"""

from collections.abc import Callable, Mapping
from typing import Any

import jsonschema
from werkzeug.datastructures import MultiDict

from boxes import codes
from boxes.errors import InvalidInput
from boxes.types import integer_text, number_text
from catalog.model import NAME as NAME_RE
from catalog.model import USER_NAME as USER_NAME_RE
from catalog.model import Action, ObjectType

NAME = {
    "type": "string",
    "pattern": f"^{NAME_RE.pattern}$",
    "x-code": codes.INVALID_NAME,
    "description": "an ASCII letter, then letters, digits or '_' (at most 64 characters)",
}
USER_NAME = {
    **NAME,
    "x-what": "user",
    "pattern": f"^{USER_NAME_RE.pattern}$",
    "description": "an ASCII letter, then letters, digits, '_', '.', '@' or '-' (at most 64)",
}
ROLE_NAME = {**NAME, "x-what": "role"}
ROLE = {
    **ROLE_NAME,
    "type": ["string", "null"],
    "description": "the active role that will own the new object (needed when several are active)",
}
OBJECT_TYPE = {
    "type": "string",
    "enum": [t.value for t in ObjectType],
    "x-code": codes.UNKNOWN_TYPE,
}
ACTION = {"type": "string", "enum": [a.value for a in Action], "x-code": codes.UNKNOWN_ACTION}
PASSWORD = {
    "type": "string",
    "minLength": 8,
    "maxLength": 72,
    "pattern": "^[^\\u0000]*$",
    "x-code": codes.INVALID_PASSWORD,
    "description": "8 characters or more, at most 72 bytes in UTF-8, no NUL",
}
STRING = {"type": "string"}
STRINGS = {"type": "array", "items": STRING}
ANY_OBJECT = {"type": "object"}


def obj(properties: dict, required: tuple[str, ...] = ()) -> dict:
    """A closed object: unknown keys are an error, not silently ignored."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


def answer(properties: dict, optional: tuple[str, ...] = ()) -> dict:
    """An answer: every property present unless ``optional``, nothing else."""
    return obj(properties, tuple(k for k in properties if k not in optional))


def listing(key: str, item: dict) -> dict:
    """``{key: [item, ...]}``."""
    return answer({key: {"type": "array", "items": item}})


CATALOG_OBJECT = answer(
    {
        "id": {"type": "integer"},
        "type": OBJECT_TYPE,
        "name": STRING,
        "owner": answer({"user": {"type": ["string", "null"]}, "role": STRING}),
        "kind": STRING,
        "source_index": {"type": "integer", "minimum": 0},
    },
    optional=("kind", "source_index"),
)


def catalog_object(**more: dict) -> dict:
    """A catalog object with ``more`` properties, each of them optional."""
    return answer(
        {**CATALOG_OBJECT["properties"], **more},
        optional=("kind", "source_index", *more),
    )


def _strict(read: Callable[[str], Any]) -> Callable[[str], Any]:
    """A reader that refuses (ValueError) what ``read`` cannot read (None)."""

    def reader(text: str) -> Any:
        value = read(text)
        if value is None:
            raise ValueError(text)
        return value

    return reader


_READERS: dict[str, Callable[[str], Any]] = {
    "string": str,
    "integer": _strict(integer_text),
    "number": _strict(number_text),
    "boolean": lambda v: {"true": True, "false": False}[v],
}


def query_values(args: MultiDict[str, str], schema: Mapping) -> dict:
    """Query parameters read by their declared type and checked against ``schema`` (an object
    schema): ``UNKNOWN_PARAMETER`` for one it does not declare, ``INVALID_PARAMETER`` for a
    bad value or one given more than once (none is a list: ``?since=1&since=2`` is ambiguous,
    never the first silently), ``INVALID_PARAMETER`` naming a required one that is missing."""
    properties = schema["properties"]
    out = {}
    for key, values in args.lists():
        if key not in properties:
            raise InvalidInput(
                f"unknown parameter {key[:40]!r}; expected one of {', '.join(properties)}",
                code=codes.UNKNOWN_PARAMETER,
            )
        if len(values) > 1:
            raise InvalidInput(
                f"parameter {key} is given {len(values)} times; give it once",
                code=codes.INVALID_PARAMETER,
                details={"parameter": key},
            )
        (value,) = values
        try:
            out[key] = _READERS[properties[key]["type"]](value)
            jsonschema.validate(out[key], properties[key])
        except (KeyError, ValueError, jsonschema.ValidationError):
            raise InvalidInput(
                code=codes.INVALID_PARAMETER, name=key, details={"parameter": key}
            ) from None
    for key in schema.get("required", ()):
        if key not in out:
            raise InvalidInput(code=codes.INVALID_PARAMETER, name=key, details={"parameter": key})
    return out
