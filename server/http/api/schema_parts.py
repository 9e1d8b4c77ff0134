"""JSON Schema pieces the blueprints' bodies share (checked by the guard, shown in OpenAPI)."""

NAME = {"type": "string", "maxLength": 64}
ROLE = {
    "type": ["string", "null"],
    "maxLength": 64,
    "description": "the active role that will own the new object (needed when several are active)",
}


def obj(properties: dict, required: tuple[str, ...] = ()) -> dict:
    """A closed object: unknown keys are an error, not silently ignored."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }
