"""Sluice's catalog: subjects, owned objects, OxRBAC permissions, sessions and the audit log.

No Flask here: the server wires these to HTTP. Start from :class:`catalog.front.Catalog`.
"""

from catalog.core import INVALID_SESSION
from catalog.front import Catalog
from catalog.model import Action, CatalogObject, ObjectType, Subject
from catalog.objects import DiagramSpec

__all__ = [
    "INVALID_SESSION",
    "Action",
    "Catalog",
    "CatalogObject",
    "DiagramSpec",
    "ObjectType",
    "Subject",
]
