"""The box types and their parameter declarations, from which the editor builds its forms,
and the allow-listed functions its expression fields complete (``boxes/expressions``)."""

from __future__ import annotations

from flask import Blueprint

from boxes import registry
from boxes.expressions.aggregates import AGGREGATES
from boxes.expressions.functions import FUNCTIONS, Function
from server.http.api.schema_parts import answer
from server.http.guard import guarded

bp = Blueprint("box_types", __name__, url_prefix="/box-types")


PARAM = {
    "type": "object",
    "required": ["name", "type", "kind", "required", "default", "description"],
    "properties": {"name": {"type": "string"}, "required": {"type": "boolean"}},
}
BOX_TYPE = {
    "type": "object",
    "required": ["type", "description", "params"],
    "properties": {"type": {"type": "string"}, "params": {"type": "array", "items": PARAM}},
}


FUNCTION = {
    "type": "object",
    "required": ["name", "signature"],
    "properties": {"name": {"type": "string"}, "signature": {"type": "string"}},
}
INDEX = answer(
    {
        "box_types": {"type": "array", "items": BOX_TYPE},
        "functions": {
            "type": "array",
            "items": FUNCTION,
            "description": "the scalar functions an expression may call",
        },
        "aggregates": {
            "type": "array",
            "items": FUNCTION,
            "description": "the aggregate functions an aggregate box's entries may call",
        },
    }
)


@bp.get("")
@guarded(answer=INDEX)
def index():
    """Every box type's declaration, in palette order, and the allow-listed functions."""
    return {
        "box_types": registry.declarations(),
        "functions": [{"name": n, "signature": signature(n, f)} for n, f in FUNCTIONS.items()],
        "aggregates": [
            {"name": n, "signature": f"{n}({'number' if a.numeric else 'field'})"}
            for n, a in AGGREGATES.items()
        ],
    }


def signature(name: str, function: Function) -> str:
    """How a function is called, for a person: ``round(numeric, long?)``, ``concat(string...)``."""
    params = [getattr(p, "value", p) for p in function.params]
    shown = [f"{p}?" if i >= function.min_args else p for i, p in enumerate(params)]
    if function.variadic:
        shown[-1] += "..."
    return f"{name}({', '.join(shown)})"
