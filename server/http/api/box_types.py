"""The box types and their parameter declarations, from which the editor builds its forms."""

from __future__ import annotations

from flask import Blueprint

from boxes import registry
from server.http.api.schema_parts import listing
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


@bp.get("")
@guarded(answer=listing("box_types", BOX_TYPE))
def index():
    """Every box type's declaration, in palette order."""
    return {"box_types": registry.declarations()}
