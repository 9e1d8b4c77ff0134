"""Box types as catalog objects: one ``box_type`` object per operator type of ``boxes.registry``
(a diagram's inputs and outputs need no right of their own).

A box type is owned like the system, and putting a box in a diagram needs ``USE`` on its type
(``catalog.operators``), which an administrator grants like any right (deny by default). The
catalog makes the types it lacks when the first administrator creates the system and whenever
it opens, so a type added to the registry later gets its object, usable by its owner role only
until granted. A catalog made before box types were objects (an upgrade) is the one exception:
its roles that may add diagrams (ADD on the system) get USE on every type, so they keep working.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from boxes import registry
from catalog import repository
from catalog.core import Core
from catalog.model import Action, CatalogObject, Grant, ObjectType
from catalog.snapshot import Snapshot

GRANTOR = "catalog upgrade"  # who granted USE on an upgrade, in the permissions table


def insert(core: Core, conn, system: CatalogObject, snapshot: Snapshot) -> list[CatalogObject]:
    """In ``conn``'s transaction, the registry's box types ``snapshot`` lacks, owned like
    ``system``."""
    made, at = [], core.clock()
    for name in registry.operators():
        if snapshot.find(ObjectType.BOX_TYPE, name) is None:
            obj = CatalogObject(
                0, ObjectType.BOX_TYPE, name, system.owner_user, system.owner_role, created_at=at
            )
            made.append(replace(obj, id=repository.insert_object(conn, obj)))
            core.log(None, "box_type_add", f"box_type:{name}", True, "box registry", conn)
    return made


def _grant_use(core: Core, conn, roles: Iterable[str], box_types: list[CatalogObject]) -> None:
    for role in roles:
        for obj in box_types:
            if role != obj.owner_role:
                repository.insert_grant(
                    conn, Grant(role, Action.USE, obj.id, GRANTOR), core.clock()
                )
        core.log(None, "grant", f"role:{role}", True, GRANTOR, conn, action="USE")


def add_missing(core: Core) -> None:
    """Make the box types the catalog lacks; nothing before there is a system object."""
    with core.store.lock:
        snapshot = core.snapshot
        system = snapshot.system
        names = registry.operators()
        if system is None or all(snapshot.find(ObjectType.BOX_TYPE, n) for n in names):
            return
        upgrade = not any(o.type is ObjectType.BOX_TYPE for o in snapshot.objects.values())
        with core.change() as conn:
            made = insert(core, conn, system, snapshot)
            if upgrade:
                makers = [r for r in snapshot.roles if snapshot.role_holds(r, Action.ADD, system)]
                _grant_use(core, conn, sorted(makers), made)
