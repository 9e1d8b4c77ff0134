"""What the server needs from the catalog: change notices, action checks by name, the schemas
of visible inputs, and the diagrams to resume after a restart."""

from __future__ import annotations

import threading

import pytest

from boxes.errors import Denied, NotFound
from catalog import Action, Catalog, DiagramSpec, ObjectType
from tests.catalog.conftest import PASSWORD

T, A = ObjectType, Action
SCHEMA = {"fields": {"x": "long"}}


@pytest.fixture
def world(cat, admin, people):
    people({"ed": ["INFO_PROVIDER"], "al": ["CUSTOMER1"]})
    cat.objects.add_schema(admin, "s", SCHEMA)
    for stream in ("in1", "in2"):
        cat.objects.add_stream(admin, stream, "s")
    for action in (A.VIEW_OBJECT, A.WRITE):
        cat.grants.grant(admin, "INFO_PROVIDER", action, T.STREAM, "in1")
    return admin


def test_every_change_notifies_listeners(cat, world):
    seen = []
    cat.on_change(lambda: seen.append(cat.core.snapshot.users_by_name["al"].enabled))
    cat.accounts.set_enabled(world, "al", False)
    assert seen == [False]


def test_a_commit_by_another_process_notifies_when_noticed(cat, world, db_url, clock):
    """SQLite's commit is found at the next access; PostgreSQL's notice reloads at once."""
    seen, disabled = [], threading.Event()

    def listener():
        seen.append(cat.core.snapshot.users_by_name["al"].enabled)
        if not seen[-1]:
            disabled.set()

    cat.on_change(listener)
    other = Catalog.open(db_url, bcrypt_rounds=4, clock=clock)
    try:
        other.accounts.set_enabled(other.sessions.login("joe", PASSWORD)[1], "al", False)
    finally:
        other.close()
    if cat.core.store.dialect.name == "sqlite":
        assert seen == []
        assert not cat.core.snapshot.users_by_name["al"].enabled and seen == [False]
    assert disabled.wait(10)


@pytest.mark.parametrize(
    "name, action, error",
    [
        ("in1", A.WRITE, None),
        ("in1", A.READ_TUPLE, Denied),
        ("in2", A.WRITE, NotFound),
        ("nowhere", A.WRITE, NotFound),
    ],
)
def test_require_by_name(cat, world, login, name, action, error):
    ed = login("ed")
    if error is None:
        assert cat.objects.require(ed, action, T.STREAM, name).name == name
    else:
        with pytest.raises(error):
            cat.objects.require(ed, action, T.STREAM, name)


def test_stream_schemas_leaves_out_what_the_session_cannot_see(cat, world, login):
    assert cat.objects.stream_schemas(login("ed"), ["in1", "in2", "nowhere", 3]) == {"in1": SCHEMA}


def test_resumable_lists_running_diagrams_with_their_input_schemas(cat, world):
    cat.objects.add_diagram(world, DiagramSpec("q1", ("in1", "in2"), ("m",), ("out1",)))
    cat.objects.add_diagram(world, DiagramSpec("q2", ("in1",), (), ("out2",)))
    cat.objects.set_query_status(world, "q1", "running")
    (running,) = cat.objects.resumable()
    assert running.diagram.name == "q1"
    assert running.schemas == {"in1": SCHEMA, "in2": SCHEMA}
    assert running.sources == {"in1": 0, "in2": 1}


def test_input_streams_lists_every_input_with_its_schema(cat, world):
    cat.objects.add_diagram(world, DiagramSpec("q1", ("in1",), ("m",), ("out1",), ("m",)))
    assert cat.objects.input_streams() == {"in1": SCHEMA, "in2": SCHEMA}
