"""Names that reveal nothing hidden: an object a caller may not see answers exactly like one
that does not exist (STYLE rule 8), creating one included.

Callers address schemas, diagrams and outputs by their *public* name. A new name clashes only
with the objects of its type its creator can see (``DUPLICATE_NAME``, as ever); one it cannot
see never changes the answer: the new object takes the same public name under a key of its own
(``q1-2``; no public name holds a ``-``), which the runtime, the result logs and the history
use and nobody is shown. Whoever creates under a role sees every object that role owns, so a
role never holds two objects of one type and name.

A caller who sees several objects of a name means the one its active roles own, if exactly
one does; otherwise the name is ambiguous for it (``NAME_AMBIGUOUS``, naming only what it sees).
Input streams keep one namespace for now (``OWNED_NAMES``). A key is ``NAME`` or ``NAME-N``,
so the public name of a key is known without the catalog (``public_of``): delivery tells a
subscriber of its output by the name it asked for.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import NamedTuple

from boxes import codes
from boxes.errors import Conflict
from catalog.authorizer import active_roles, sees
from catalog.model import NAME, CatalogObject, ObjectType, Subject
from catalog.snapshot import Snapshot

# What may share a public name with an object its creator cannot see. Boxes and a diagram's
# derived streams are keyed under their diagram's key; input streams (their ingestion logs are
# known by name), box types and the system keep one namespace.
OWNED_NAMES = frozenset({ObjectType.SCHEMA, ObjectType.DIAGRAM, ObjectType.OUTPUT})
KEY_MARK = "-"  # between a key's name and its number; no public name holds it
NUMBERED = re.compile(rf"({NAME.pattern}){KEY_MARK}[0-9]+")


def public_of(key: str) -> str:
    """The public name of the object whose key is ``key`` (anything else, such as a variant's
    route, is returned as it is).

    >>> public_of("q1-2"), public_of("q1"), public_of("q1.v-2")
    ('q1', 'q1', 'q1.v-2')
    """
    numbered = NUMBERED.fullmatch(key)
    return numbered.group(1) if numbered else key


def resolve(
    subject: Subject | None, type_: ObjectType, name: str, snapshot: Snapshot
) -> CatalogObject | None:
    """The object ``subject`` means by ``name``, if it sees one; None exactly as if none existed.
    A key names its one object too (the server's own calls pass keys; no public name holds
    the ``-`` of a key made over a hidden name)."""
    named = snapshot.named(type_, name) or tuple(filter(None, [snapshot.find(type_, name)]))
    seen = [o for o in named if sees(subject, o, snapshot).allowed]
    if len(seen) <= 1:
        return seen[0] if seen else None
    roles = active_roles(subject, snapshot) or frozenset()
    own = [o for o in seen if o.owner_role in roles]
    if len(own) == 1:
        return own[0]
    raise Conflict(
        code=codes.NAME_AMBIGUOUS,
        count=len(seen),
        what=type_.value,
        name=name,
        owners=", ".join(sorted(o.owner_role for o in seen)),
    )


class Name(NamedTuple):
    """A new object's key, and its public name where that differs (else None)."""

    key: str
    public_name: str | None = None


def new_name(
    subject: Subject | None,
    type_: ObjectType,
    name: str,
    snapshot: Snapshot,
    freed: Collection[int] = (),
) -> Name:
    """The name of a new object, unless ``subject`` sees one of that type and name already
    (but those ``freed``: a diagram being replaced and its members): ``DUPLICATE_NAME``. Where
    names are not owned, any object clashes. Its key is the name itself while no other object
    has that key (every object but those named over a hidden one), else the first free
    ``name-N``."""
    found = [o for o in snapshot.named(type_, name) if o.id not in freed]
    if any(type_ not in OWNED_NAMES or sees(subject, o, snapshot).allowed for o in found):
        raise Conflict(code=codes.DUPLICATE_NAME, what=type_.value, name=name)
    key, n = name, 1
    while (o := snapshot.find(type_, key)) is not None and o.id not in freed:
        n += 1
        key = f"{name}{KEY_MARK}{n}"
    return Name(key, None if key == name else name)
