"""Operator-based access control (Borealis paper, section 5.4): who may use which box type, and
how far a role may push box parameters.

Box types are catalog objects (``catalog.box_types``); putting a box in a diagram needs ``USE``
on its type. Roles carry limits on box parameters (``boxes.cost.PARAMETERS``) below the
system-wide ceilings, which the server checks for everyone
(``server.control.diagrams.affordable``). A diagram is admitted when it is added, replaced and
deployed, against the session's active roles at that moment, before Spark sees it.

>>> from catalog.bootstrap import ADMIN_ROLE
>>> cat.operators.set_limits(joe, ADMIN_ROLE, {"windows_per_tuple": 50})
{'windows_per_tuple': 50.0}
>>> cat.operators.limits_of(joe, ADMIN_ROLE)
{'windows_per_tuple': 50.0}
>>> _ = cat.operators.set_limits(joe, ADMIN_ROLE, {"windows_per_tuple": None})
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from boxes import codes
from boxes.cost import PARAMETERS, Cost, effective, excesses
from boxes.errors import Denied, InvalidInput
from catalog import repository
from catalog.accounts import role_named
from catalog.authorizer import active_roles, decide
from catalog.core import Core
from catalog.model import Action, ObjectType, Subject
from catalog.snapshot import Snapshot

T = ObjectType
MAX_LIMIT = 1e12


def _limit_value(parameter: str, value: object) -> float | None:
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not 0 < value < MAX_LIMIT
        or math.isnan(value)
    ):
        raise InvalidInput(code=codes.INVALID_LIMIT, parameter=parameter)
    return float(value)


class Operators:
    def __init__(self, core: Core) -> None:
        self.core = core

    def limits_of(self, subject: Subject, role: str) -> dict[str, float]:
        """A role's limits (administrators)."""
        role_named(self.core.require_admin(subject, "role_limits"), role)
        with self.core.store.reader() as conn:
            return repository.load_role_limits(conn).get(role, {})

    def set_limits(
        self, subject: Subject, role: str, changes: Mapping[str, object]
    ) -> dict[str, float]:
        """For an administrator: set (a number) or remove (``None``) a role's limits, all or
        none, each audited with its old and new value. Returns the role's limits now."""
        unknown = sorted(set(changes) - set(PARAMETERS))
        if unknown:
            raise InvalidInput(
                code=codes.UNKNOWN_LIMIT,
                parameters=", ".join(unknown)[:200],
                expected=", ".join(PARAMETERS),
                details={"parameters": unknown[:20]},
            )
        values = {name: _limit_value(name, value) for name, value in changes.items()}
        core = self.core
        with core.store.lock:
            role_named(core.require_admin(subject, "role_limits"), role)
            with core.store.transaction() as conn:
                before = repository.load_role_limits(conn).get(role, {})
                for name, value in sorted(values.items()):
                    if value is None:
                        repository.delete_role_limit(conn, role, name)
                    else:
                        repository.set_role_limit(
                            conn, role, name, value, subject.user_name, core.clock()
                        )
                    core.log(
                        subject,
                        "role_limits",
                        f"role:{role}",
                        True,
                        "administrator",
                        conn,
                        parameter=name,
                        old=before.get(name),
                        new=value,
                    )
                return repository.load_role_limits(conn).get(role, {})

    def admit(
        self, subject: Subject, snapshot: Snapshot, diagram: str, cost: Cost, event: str
    ) -> None:
        """Refuse (audited) a diagram that uses a box type no active role may USE, or that is
        over the limits of the session's active roles."""
        core = self.core
        refused = []
        for name in cost.box_types:
            obj = snapshot.find(T.BOX_TYPE, name)
            if obj is None or not decide(subject, Action.USE, obj, snapshot).allowed:
                refused.append(name)
        if refused:
            core.log(
                subject,
                event,
                f"diagram:{diagram}",
                False,
                "no USE on box types",
                box_types=refused,
            )
            raise Denied(
                code=codes.BOX_TYPE_NOT_ALLOWED,
                diagram=diagram,
                types=", ".join(refused),
                details={"box_types": refused},
            )
        with core.store.reader() as conn:
            role_limits = repository.load_role_limits(conn)
        roles = active_roles(subject, snapshot) or frozenset()
        over = excesses(cost, effective(role_limits, roles))
        if over:
            found = [e.to_dict() for e in over]
            core.log(subject, event, f"diagram:{diagram}", False, "over limits", excesses=found)
            raise Denied(
                code=codes.OVER_LIMIT,
                diagram=diagram,
                excesses="; ".join(map(str, over)),
                details={"excesses": found},
            )
