"""The snapshot each change derives from the previous one equals a fresh read of every row.

Random sequences of changes (some refused, some by another process) are run against a real
catalog database (a SQLite file, a PostgreSQL database), seeded with a few objects and grants so
that most kinds of change can succeed; after each one the current snapshot must equal one built
from scratch.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boxes.errors import SluiceError
from catalog import Action, Catalog, DiagramSpec, ObjectType, repository
from catalog.bootstrap import add_admin
from catalog.snapshot import build
from tests.catalog.conftest import PASSWORD

T, A = ObjectType, Action
ROLES = ("R0", "R1")
USERS = {"u0": ["R0"], "u1": ["R0", "R1"]}
SCHEMAS = ("s0", "s1")
STREAMS = ("in0", "in1", "in2")
DIAGRAMS = ("d0", "d1")
NAMED = {
    T.SCHEMA: SCHEMAS,
    T.STREAM: STREAMS,
    T.DIAGRAM: DIAGRAMS,
    T.OUTPUT: tuple(f"{d}_out" for d in DIAGRAMS),
    T.SYSTEM: ("system",),
}
OBJECTS = st.sampled_from([(t, n) for t, names in NAMED.items() for n in names])
WHO = st.sampled_from(("joe", "u0", "u1"))

CHANGES = st.one_of(
    st.tuples(st.just("schema"), st.sampled_from(SCHEMAS)),
    st.tuples(st.just("stream"), st.sampled_from(STREAMS), st.sampled_from(SCHEMAS)),
    st.tuples(
        st.just("diagram"),
        WHO,
        st.sampled_from(DIAGRAMS),
        st.lists(st.sampled_from(STREAMS), min_size=1, max_size=3),
        st.integers(0, 4),
    ),
    st.tuples(st.just("drop"), WHO, OBJECTS),
    st.tuples(
        st.just("grant"),
        WHO,
        st.sampled_from(ROLES + ("ADMIN",)),
        st.sampled_from(list(A)),
        OBJECTS,
    ),
    st.tuples(st.just("revoke"), WHO, st.sampled_from(ROLES), st.sampled_from(list(A)), OBJECTS),
    st.tuples(st.just("transfer"), OBJECTS, st.sampled_from(ROLES + ("ADMIN",))),
    st.tuples(
        st.just("status"), WHO, st.sampled_from(DIAGRAMS), st.sampled_from(("running", "stopped"))
    ),
    st.tuples(st.just("role"), st.booleans(), st.sampled_from(ROLES + ("R2",))),
    st.tuples(
        st.just("member"), st.booleans(), st.sampled_from(list(USERS)), st.sampled_from(ROLES)
    ),
    st.tuples(st.just("enable"), st.booleans(), st.sampled_from(list(USERS) + ["joe"])),
    st.tuples(st.just("login"), WHO),
    st.tuples(st.just("logout"), st.sampled_from(list(USERS))),
    st.tuples(st.just("elsewhere"), st.sampled_from(ROLES), OBJECTS),
    st.tuples(st.just("policy"), st.booleans(), st.sampled_from(ROLES)),
    st.tuples(st.just("attributes"), st.sampled_from(list(USERS)), st.integers(0, 3)),
    st.tuples(st.just("govern"), st.booleans(), st.sampled_from(("in0", "in1"))),
)


def reread(cat: Catalog):
    """The snapshot as a full reload would build it, from committed rows only."""
    with cat.core.store.reader() as conn:
        return build(
            repository.load_subjects(conn),
            repository.load_objects(conn),
            repository.load_levels(conn),
            repository.load_policies(conn),
            repository.load_punctuations(conn),
        )


class World:
    """A catalog, its users' sessions, and a second catalog on the same file (another process)."""

    def __init__(self, url: str) -> None:
        self.cat = Catalog.open(url, bcrypt_rounds=4)
        add_admin(self.cat, "joe", PASSWORD)
        self.sessions = {"joe": self.cat.sessions.login("joe", PASSWORD)[1]}
        admin = self.sessions["joe"]
        for role in ROLES:
            self.cat.accounts.add_role(admin, role)
        for name, roles in USERS.items():
            self.cat.accounts.add_user(admin, name, PASSWORD, roles)
        for schema in SCHEMAS:
            self.cat.objects.add_schema(admin, schema, {"fields": {"x": "long"}})
        for stream in STREAMS[:2]:
            self.cat.objects.add_stream(admin, stream, SCHEMAS[0])
        for action, type_, name in (
            (A.ADD, T.SYSTEM, "system"),
            (A.VIEW_OBJECT, T.SCHEMA, "s0"),
            (A.VIEW_OBJECT, T.STREAM, "in0"),
            (A.READ_TUPLE, T.STREAM, "in0"),
        ):
            self.cat.grants.grant(admin, "R0", action, type_, name)
        self.other = Catalog.open(url, bcrypt_rounds=4)
        self.other_admin = self.other.sessions.login("joe", PASSWORD)[1]
        self.cat.core.settle()  # that login's notice, before a change compares snapshots

    def run(self, change: tuple) -> None:
        cat, admin = self.cat, self.sessions["joe"]
        kind, *args = change
        who = (
            self.sessions.get(args[0])
            if kind in ("diagram", "drop", "grant", "revoke", "status", "logout")
            else admin
        )
        if who is None:
            return
        if kind == "schema":
            cat.objects.add_schema(admin, args[0], {"fields": {"x": "long"}})
        elif kind == "stream":
            cat.objects.add_stream(admin, *args)
        elif kind == "diagram":
            _, name, inputs, boxes = args
            cat.objects.add_diagram(
                who,
                DiagramSpec(
                    name,
                    tuple(inputs),
                    tuple(f"b{i}" for i in range(boxes)),
                    (f"{name}_out",),
                    streams=("mid",) if boxes else (),
                ),
                role=min(who.roles, default=None),
            )
        elif kind == "drop":
            cat.objects.drop(who, *args[1])
        elif kind == "grant":
            cat.grants.grant(who, args[1], args[2], *args[3])
        elif kind == "revoke":
            cat.grants.revoke(who, args[1], args[2], *args[3])
        elif kind == "transfer":
            cat.objects.transfer(admin, *args[0], args[1])
        elif kind == "status":
            cat.objects.set_query_status(who, args[1], args[2])
        elif kind == "role":
            (cat.accounts.add_role if args[0] else cat.accounts.delete_role)(admin, args[1])
        elif kind == "member":
            assign = cat.accounts.assign_role if args[0] else cat.accounts.unassign_role
            assign(admin, args[1], args[2])
        elif kind == "enable":
            cat.accounts.set_enabled(admin, args[1], args[0])
        elif kind == "login":
            self.sessions[args[0]] = cat.sessions.login(args[0], PASSWORD)[1]
        elif kind == "logout":
            cat.sessions.logout(who)
        elif kind == "policy":
            item = {"name": args[1], "role": args[1], "streams": {"in0": "*"}, "privilege": "read"}
            if args[0]:
                cat.policies.put(admin, [item], replace=True)
            else:
                cat.policies.delete(admin, args[1])
        elif kind == "attributes":
            cat.policies.set_attributes(admin, args[0], {"ships": list(range(args[1]))})
        elif kind == "govern":
            cat.punctuations.set_governance(admin, args[1], args[0], "x" if args[0] else None)
        elif kind == "elsewhere":
            self.other.grants.grant(self.other_admin, args[0], A.VIEW_OBJECT, *args[1])

    def close(self) -> None:
        self.other.close()
        self.cat.close()


def test_every_change_leaves_the_snapshot_a_full_reload_would_build(new_db, backend):
    """Fewer examples on PostgreSQL: each opens two catalogs on a database of its own."""

    @settings(
        max_examples=60 if backend == "sqlite" else 15,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(changes=st.lists(CHANGES, min_size=1, max_size=25))
    def run(changes):
        world = World(new_db())
        try:
            for change in changes:
                before = world.cat.core.snapshot
                try:
                    world.run(change)
                except SluiceError:
                    assert world.cat.core.snapshot is before
                world.cat.core.store.settle()  # another process's change ("elsewhere")
                assert world.cat.core.snapshot == reread(world.cat), change
        finally:
            world.close()

    run()


@pytest.mark.parametrize("drop", [(T.DIAGRAM, "d0"), (T.STREAM, "in0")])
def test_cascades_reach_the_snapshot(cat, admin, drop):
    """Dropping a diagram removes its boxes and the grants on them, which no caller names."""
    cat.objects.add_schema(admin, "s", {"fields": {"x": "long"}})
    cat.objects.add_stream(admin, "in0", "s")
    if drop[0] is T.DIAGRAM:
        cat.objects.add_diagram(admin, DiagramSpec("d0", ("in0",), ("b0", "b1"), ("out",)))
        cat.grants.grant(admin, "ADMIN", A.VIEW_OBJECT, T.BOX, "d0.b0")
    cat.grants.grant(admin, "ADMIN", A.CHANGE_PERM, *drop)
    cat.objects.drop(admin, *drop)
    snapshot = cat.core.snapshot
    assert snapshot == reread(cat)
    assert snapshot.find(*drop) is None
    assert not snapshot.held and not snapshot.grants
    assert [o.name for o in snapshot.objects.values() if o.type not in (T.SYSTEM, T.BOX_TYPE)] == (
        ["s", "in0"] if drop[0] is T.DIAGRAM else ["s"]
    )
