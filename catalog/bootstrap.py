"""The first administrator, and the Borealis paper's demo scenario.

``add_admin`` is for callers that already hold the database file (configuration at start-up,
``sluice user add --admin``), so it needs no session. It creates the ``system`` object, owned by
the ``ADMIN`` role, the first time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from boxes import codes, registry
from boxes.errors import Conflict
from catalog import box_types, passwords, repository
from catalog.front import Catalog
from catalog.model import USER_NAME, Action, CatalogObject, ObjectType, Subject, check_name

ADMIN_ROLE = "ADMIN"
LOCAL = "local administrator"


def add_admin(cat: Catalog, name: str, password: str) -> bool:
    """Add ``name`` as an ADMIN; False (and no change) if that user exists already."""
    core = cat.core
    check_name(name, "user", USER_NAME)
    hashed = passwords.hash_password(password, core.settings.bcrypt_rounds)
    with core.store.lock:
        snapshot = core.snapshot
        if name in snapshot.users_by_name:
            return False
        at = core.clock()
        with core.change() as conn:
            if ADMIN_ROLE not in snapshot.roles:
                repository.insert_role(conn, ADMIN_ROLE, at)
            user_id = repository.insert_user(conn, name, hashed, True, at)
            repository.assign_role(conn, user_id, ADMIN_ROLE)
            if snapshot.system is None:
                system = CatalogObject(
                    id=0,
                    type=ObjectType.SYSTEM,
                    name="system",
                    owner_user=name,
                    owner_role=ADMIN_ROLE,
                    created_at=at,
                )
                repository.insert_object(conn, system)
                box_types.insert(core, conn, system, snapshot)
            core.log(None, "user_add", f"user:{name}", True, LOCAL, conn, roles=[ADMIN_ROLE])
    return True


def ensure_admin(cat: Catalog, name: str, password: str) -> bool:
    """Configuration's first administrator: added only while the catalog has no users at all."""
    if cat.core.snapshot.users:
        return False
    return add_admin(cat, name, password)


DEMO_ROLES = ("INFO_PROVIDER", "CUSTOMER1", "CUSTOMER2")
DEMO_USERS = {"joe": "ADMIN", "ed": "INFO_PROVIDER", "al": "CUSTOMER1", "bob": "CUSTOMER2"}
DEMO_SCHEMA = {
    "fields": {"time": "timestamp", "symbol": "string", "price": "double"},
    "event_time": "time",
}
# Joe's grants at the end of the paper's Figure 8 (plus ADD on the system, which Al needs to
# insert q1 and which the paper leaves out "for simplicity", and USE on every box type, which
# operator-based access control, the paper's future work, needs).
DEMO_GRANTS = (
    [
        ("CUSTOMER1", a, ObjectType.STREAM, s)
        for s in ("in1", "in2")
        for a in (Action.VIEW_OBJECT, Action.READ_TUPLE)
    ]
    + [
        ("INFO_PROVIDER", a, ObjectType.STREAM, s)
        for s in ("in1", "in2")
        for a in (Action.VIEW_OBJECT, Action.WRITE)
    ]
    + [(r, Action.VIEW_OBJECT, ObjectType.SCHEMA, "s") for r in ("CUSTOMER1", "INFO_PROVIDER")]
    + [("CUSTOMER1", Action.ADD, ObjectType.SYSTEM, "system")]
    + [("CUSTOMER1", Action.USE, ObjectType.BOX_TYPE, t) for t in registry.operators()]
)


def seed_demo(cat: Catalog) -> dict[str, str]:
    """Seed the paper's scenario up to Figure 8; return each user's password, to print once."""
    if cat.core.snapshot.users:
        raise Conflict("the demo is seeded only into an empty catalog", code=codes.NOT_EMPTY)
    secrets = {name: passwords.new_password() for name in DEMO_USERS}
    add_admin(cat, "joe", secrets["joe"])
    _, joe = cat.sessions.login("joe", secrets["joe"])
    for role in DEMO_ROLES:
        cat.accounts.add_role(joe, role)
    for name, role in DEMO_USERS.items():
        if name != "joe":
            cat.accounts.add_user(joe, name, secrets[name], [role])
    cat.objects.add_schema(joe, "s", DEMO_SCHEMA)
    for stream in ("in1", "in2"):
        cat.objects.add_stream(joe, stream, "s")
    for role, action, type_, name in DEMO_GRANTS:
        cat.grants.grant(joe, role, action, type_, name)
    cat.sessions.logout(joe)
    return secrets


def add_demo_people(
    cat: Catalog,
    logins: dict[str, str],
    keep: Callable[[dict[str, str]], None],
    users: Mapping[str, str],
) -> tuple[dict[str, str], Subject]:
    """A demo part's roles and users (``users``: name -> role), as the demo's administrator
    joe; returns ``logins`` with the new users' passwords and joe's session. The passwords are
    given to ``keep`` before the users exist, so a failure in between leaves no user without
    one."""
    logins = {**{name: passwords.new_password() for name in users}, **logins}
    keep(logins)
    _, joe = cat.sessions.login("joe", logins["joe"])
    for role in dict.fromkeys(users.values()):
        cat.accounts.add_role(joe, role)
    for name, role in users.items():
        cat.accounts.add_user(joe, name, logins[name], [role])
    return logins, joe
