"""The box types and their parameter declarations, from which the editor builds its forms."""

from __future__ import annotations

from flask import Blueprint

from boxes import registry
from server.http.guard import guarded

bp = Blueprint("box_types", __name__, url_prefix="/box-types")


@bp.get("")
@guarded()
def index():
    """Every box type's declaration, in palette order."""
    return {"box_types": registry.declarations()}
