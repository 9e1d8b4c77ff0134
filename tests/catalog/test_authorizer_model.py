"""Grants and revokes in any order agree with a plain set model of who holds what."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog import Action, Catalog, ObjectType
from catalog.authorizer import decide
from catalog.bootstrap import add_admin
from tests.catalog.conftest import PASSWORD

T, A = ObjectType, Action
ROLES = ("R0", "R1", "R2")
STREAMS = ("in0", "in1", "in2")
ACTIONS = (A.VIEW_OBJECT, A.READ_TUPLE, A.WRITE, A.SUBSCRIBE)
OPS = st.lists(
    st.tuples(
        st.booleans(), st.sampled_from(ROLES), st.sampled_from(ACTIONS), st.sampled_from(STREAMS)
    ),
    max_size=12,
)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    cat = Catalog.open(f"sqlite:///{tmp_path_factory.mktemp('model') / 'c.db'}", bcrypt_rounds=4)
    add_admin(cat, "joe", PASSWORD)
    admin = cat.sessions.login("joe", PASSWORD)[1]
    cat.objects.add_schema(admin, "s", {"fields": {"x": "long"}})
    for stream in STREAMS:
        cat.objects.add_stream(admin, stream, "s")
    for i, role in enumerate(ROLES):
        cat.accounts.add_role(admin, role)
        cat.accounts.add_user(admin, f"u{i}", PASSWORD, [role])
    sessions = {role: cat.sessions.login(f"u{i}", PASSWORD)[1] for i, role in enumerate(ROLES)}
    yield cat, admin, sessions, set()
    cat.close()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=OPS)
def test_decisions_match_the_set_model(world, ops):
    cat, admin, sessions, model = world
    for is_grant, role, action, stream in ops:
        if is_grant:
            assert cat.grants.grant(admin, role, action, T.STREAM, stream) == (
                (role, action, stream) not in model
            )
            model.add((role, action, stream))
        else:
            assert cat.grants.revoke(admin, role, action, T.STREAM, stream) == (
                (role, action, stream) in model
            )
            model.discard((role, action, stream))
    snapshot = cat.core.snapshot
    for role, subject in sessions.items():
        for stream in STREAMS:
            obj = snapshot.find(T.STREAM, stream)
            for action in ACTIONS:
                assert decide(subject, action, obj, snapshot).allowed == (
                    (role, action, stream) in model
                )
        readable = {s for s in STREAMS if (role, A.READ_TUPLE, s) in model}
        assert cat.sessions.readable_sources(subject) == sum(
            1 << snapshot.find(T.STREAM, s).source_index for s in readable
        )
        assert {o.name for o in cat.objects.lookup(subject)} == {
            s for s in STREAMS if (role, A.VIEW_OBJECT, s) in model
        }
