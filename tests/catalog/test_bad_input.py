"""Bad input gives one clear, coded error and leaves the catalog exactly as it was."""

from __future__ import annotations

import pytest

from boxes.errors import Conflict, Denied, DiagramInvalid, InvalidInput, NotFound
from catalog import Action, DiagramSpec, ObjectType
from tests.catalog.conftest import PASSWORD, sql, tables

T, A = ObjectType, Action
BAD_NAMES = [
    "o'brien",
    'say "hi"',
    "x; DROP TABLE users",
    "café",
    "\u0430dmin",
    "a" * 65,
    "n" * 10_000,
    "",
    " lead",
    "1st",
    None,
    7,
    "a\0b",
]


def dump(cat) -> dict:
    """Every catalog table but the audit log (a refusal is itself audited)."""
    names = [t for t in tables(cat) if t != "audit"]
    with cat.core.store.reader() as conn:
        return {t: sorted(map(repr, sql(conn, f"SELECT * FROM {t}"))) for t in names}


@pytest.fixture
def world(cat, admin, people, login):
    people({"al": ["CUSTOMER1"], "bob": ["CUSTOMER2"]})
    cat.objects.add_schema(admin, "s", {"fields": {"x": "long"}})
    for stream in ("in1", "in2", "in3"):
        cat.objects.add_stream(admin, stream, "s")
    cat.grants.grant(admin, "CUSTOMER1", A.ADD, T.SYSTEM, "system")
    cat.grants.grant(admin, "CUSTOMER1", A.VIEW_OBJECT, T.SCHEMA, "s")
    for action in (A.VIEW_OBJECT, A.READ_TUPLE):
        cat.grants.grant(admin, "CUSTOMER1", action, T.STREAM, "in1")
    cat.grants.grant(admin, "CUSTOMER1", A.VIEW_OBJECT, T.STREAM, "in2")
    al = login("al")
    cat.objects.add_diagram(al, DiagramSpec("q1", ("in1",), ("f",), ("out1",)))
    return admin, al, login("bob")


def spec(name="q2", inputs=("in1",), boxes=("f",), outputs=("out2",), streams=()):
    return DiagramSpec(name, inputs, boxes, outputs, streams)


CASES = {
    "duplicate user": (
        lambda c, j, a, b: c.accounts.add_user(j, "al", PASSWORD),
        Conflict,
        "DUPLICATE_NAME",
    ),
    "duplicate role": (
        lambda c, j, a, b: c.accounts.add_role(j, "CUSTOMER1"),
        Conflict,
        "DUPLICATE_NAME",
    ),
    "duplicate schema": (
        lambda c, j, a, b: c.objects.add_schema(j, "s", {"fields": {"y": "long"}}),
        Conflict,
        "DUPLICATE_NAME",
    ),
    "duplicate stream": (
        lambda c, j, a, b: c.objects.add_stream(j, "in1", "s"),
        Conflict,
        "DUPLICATE_NAME",
    ),
    "duplicate diagram": (
        lambda c, j, a, b: c.objects.add_diagram(a, spec(name="q1")),
        Conflict,
        "DUPLICATE_NAME",
    ),
    "output name taken": (
        lambda c, j, a, b: c.objects.add_diagram(a, spec(outputs=("out1",))),
        Conflict,
        "DUPLICATE_NAME",
    ),
    "name twice in a diagram": (
        lambda c, j, a, b: c.objects.add_diagram(a, spec(boxes=("f", "f"))),
        DiagramInvalid,
        "DIAGRAM_INVALID",
    ),
    "dotted box name": (
        lambda c, j, a, b: c.objects.add_diagram(a, spec(boxes=("q1.f",))),
        InvalidInput,
        "INVALID_NAME",
    ),
    "user with unknown role": (
        lambda c, j, a, b: c.accounts.add_user(j, "cy", PASSWORD, ["NOPE"]),
        NotFound,
        "UNKNOWN_ROLE",
    ),
    "assign unknown role": (
        lambda c, j, a, b: c.accounts.assign_role(j, "al", "NOPE"),
        NotFound,
        "UNKNOWN_ROLE",
    ),
    "assign to unknown user": (
        lambda c, j, a, b: c.accounts.assign_role(j, "cy", "CUSTOMER1"),
        NotFound,
        "UNKNOWN_USER",
    ),
    "disable unknown user": (
        lambda c, j, a, b: c.accounts.set_enabled(j, "cy", False),
        NotFound,
        "UNKNOWN_USER",
    ),
    "grant to unknown role": (
        lambda c, j, a, b: c.grants.grant(j, "NOPE", A.VIEW_OBJECT, T.SCHEMA, "s"),
        NotFound,
        "UNKNOWN_ROLE",
    ),
    "grant unknown action": (
        lambda c, j, a, b: c.grants.grant(j, "CUSTOMER2", "DELETE", T.SCHEMA, "s"),
        InvalidInput,
        "UNKNOWN_ACTION",
    ),
    "grant on unknown type": (
        lambda c, j, a, b: c.grants.grant(j, "CUSTOMER2", A.VIEW_OBJECT, "table", "s"),
        InvalidInput,
        "UNKNOWN_TYPE",
    ),
    "grant on unknown object": (
        lambda c, j, a, b: c.grants.grant(j, "CUSTOMER2", A.VIEW_OBJECT, T.SCHEMA, "nope"),
        NotFound,
        "NOT_FOUND",
    ),
    "grant what does not apply": (
        lambda c, j, a, b: c.grants.grant(j, "CUSTOMER2", A.WRITE, T.SCHEMA, "s"),
        InvalidInput,
        "ACTION_NOT_APPLICABLE",
    ),
    "grant what you do not hold": (
        lambda c, j, a, b: c.grants.grant(a, "CUSTOMER2", A.READ_TUPLE, T.STREAM, "in2"),
        Denied,
        "NOT_HELD",
    ),
    "grant without CHANGE_PERM": (
        lambda c, j, a, b: c.grants.grant(a, "CUSTOMER2", A.READ_TUPLE, T.STREAM, "in1"),
        Denied,
        "PERMISSION_DENIED",
    ),
    "grant on an unseen object": (
        lambda c, j, a, b: c.grants.grant(b, "CUSTOMER2", A.VIEW_OBJECT, T.OUTPUT, "out1"),
        NotFound,
        "NOT_FOUND",
    ),
    "revoke ownership": (
        lambda c, j, a, b: c.grants.revoke(a, "CUSTOMER1", A.SUBSCRIBE, T.OUTPUT, "out1"),
        Conflict,
        "OWNER_NOT_REVOCABLE",
    ),
    "revoke without right": (
        lambda c, j, a, b: c.grants.revoke(a, "CUSTOMER1", A.READ_TUPLE, T.STREAM, "in1"),
        Denied,
        "PERMISSION_DENIED",
    ),
    "stream of unknown schema": (
        lambda c, j, a, b: c.objects.add_stream(j, "in3", "nope"),
        NotFound,
        "NOT_FOUND",
    ),
    "bad schema": (
        lambda c, j, a, b: c.objects.add_schema(j, "t", {"fields": {"x": "money"}}),
        InvalidInput,
        "SCHEMA_INVALID",
    ),
    "diagram reads an unseen stream": (
        lambda c, j, a, b: c.objects.add_diagram(a, spec(inputs=("in1", "in3"))),
        NotFound,
        "NOT_FOUND",
    ),
    "diagram without ADD": (
        lambda c, j, a, b: c.objects.add_diagram(b, spec()),
        Denied,
        "PERMISSION_DENIED",
    ),
    "diagram without READ_TUPLE": (
        lambda c, j, a, b: c.objects.add_diagram(a, spec(inputs=("in1", "in2"))),
        Denied,
        "PERMISSION_DENIED",
    ),
    "diagram reads an output": (
        lambda c, j, a, b: c.objects.add_diagram(a, spec(inputs=("out1",))),
        NotFound,
        "NOT_FOUND",
    ),
    "user admin without CHANGE_SYSTEM": (
        lambda c, j, a, b: c.accounts.add_user(a, "cy", PASSWORD),
        Denied,
        "PERMISSION_DENIED",
    ),
    "short password": (
        lambda c, j, a, b: c.accounts.add_user(j, "cy", "short"),
        InvalidInput,
        "INVALID_PASSWORD",
    ),
    "password over 72 bytes": (
        lambda c, j, a, b: c.accounts.add_user(j, "cy", "é" * 40),
        InvalidInput,
        "INVALID_PASSWORD",
    ),
    "owner role not active": (
        lambda c, j, a, b: c.objects.add_schema(a, "t", {"fields": {"x": "long"}}, role="ADMIN"),
        Denied,
        "ROLE_NOT_ACTIVE",
    ),
    "disable the last admin": (
        lambda c, j, a, b: c.accounts.set_enabled(j, "joe", False),
        Conflict,
        "LAST_ADMINISTRATOR",
    ),
    "delete the last admin": (
        lambda c, j, a, b: c.accounts.delete_user(j, "joe"),
        Conflict,
        "LAST_ADMINISTRATOR",
    ),
    "unassign the last admin": (
        lambda c, j, a, b: c.accounts.unassign_role(j, "joe", "ADMIN"),
        Conflict,
        "LAST_ADMINISTRATOR",
    ),
    "delete a role that owns": (
        lambda c, j, a, b: c.accounts.delete_role(j, "CUSTOMER1"),
        Conflict,
        "ROLE_OWNS_OBJECTS",
    ),
    "drop a schema in use": (
        lambda c, j, a, b: c.objects.drop(j, T.SCHEMA, "s"),
        Conflict,
        "IN_USE",
    ),
    "drop a stream in use": (
        lambda c, j, a, b: c.objects.drop(j, T.STREAM, "in1"),
        Conflict,
        "IN_USE",
    ),
    "drop a box alone": (
        lambda c, j, a, b: c.objects.drop(a, T.BOX, "q1.f"),
        InvalidInput,
        "NOT_DROPPABLE",
    ),
    "drop what you do not own": (
        lambda c, j, a, b: c.objects.drop(a, T.STREAM, "in1"),
        Denied,
        "PERMISSION_DENIED",
    ),
    "bad query status": (
        lambda c, j, a, b: c.objects.set_query_status(a, "q1", "paused"),
        InvalidInput,
        "INVALID_STATUS",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_bad_request_is_refused_whole(cat, world, case):
    call, error, code = CASES[case]
    before = dump(cat)
    with pytest.raises(error) as err:
        call(cat, *world)
    assert err.value.code == code
    assert dump(cat) == before


NAMED = {
    "user": lambda c, j, n: c.accounts.add_user(j, n, PASSWORD),
    "role": lambda c, j, n: c.accounts.add_role(j, n),
    "schema": lambda c, j, n: c.objects.add_schema(j, n, {"fields": {"x": "long"}}),
    "stream": lambda c, j, n: c.objects.add_stream(j, n, "s"),
    "diagram": lambda c, j, n: c.objects.add_diagram(j, spec(name=n)),
    "box": lambda c, j, n: c.objects.add_diagram(j, spec(boxes=("ok", n))),
    "output": lambda c, j, n: c.objects.add_diagram(j, spec(outputs=(n,))),
}


# On SQLite only: a name is refused before any statement runs, so the database cannot matter,
# and this matrix would add a tenth of the catalog suite's time on PostgreSQL.
@pytest.mark.parametrize("backend", ["sqlite"])
@pytest.mark.parametrize("name", BAD_NAMES, ids=lambda n: repr(n)[:20])
@pytest.mark.parametrize("what", NAMED)
def test_bad_names_are_refused(cat, world, what, name):
    before = dump(cat)
    with pytest.raises(InvalidInput) as err:
        NAMED[what](cat, world[0], name)
    assert err.value.code == "INVALID_NAME"
    assert len(err.value.message) < 300
    assert dump(cat) == before


@pytest.mark.parametrize("what", NAMED)
def test_a_good_name_of_64_characters_is_accepted(cat, world, what):
    before = dump(cat)
    NAMED[what](cat, world[0], "A" + "b_9" * 21)
    assert dump(cat) != before


UNSEEN = {
    "get": lambda c, a: c.objects.get(a, T.STREAM, "in3"),
    "grant": lambda c, a: c.grants.grant(a, "CUSTOMER2", A.VIEW_OBJECT, T.STREAM, "in3"),
    "revoke": lambda c, a: c.grants.revoke(a, "CUSTOMER2", A.VIEW_OBJECT, T.STREAM, "in3"),
    "list grants": lambda c, a: c.grants.of(a, T.STREAM, "in3"),
    "drop": lambda c, a: c.objects.drop(a, T.STREAM, "in3"),
    "read it": lambda c, a: c.objects.add_diagram(a, spec(inputs=("in3",))),
}


@pytest.mark.parametrize("op", UNSEEN)
def test_an_unseen_object_answers_like_a_missing_one(cat, world, op):
    admin, al, _ = world
    with pytest.raises(NotFound) as hidden:
        UNSEEN[op](cat, al)
    cat.objects.drop(admin, T.STREAM, "in3")
    with pytest.raises(NotFound) as missing:
        UNSEEN[op](cat, al)
    assert hidden.value.to_dict() == missing.value.to_dict()
