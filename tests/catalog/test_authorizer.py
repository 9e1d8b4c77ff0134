"""The decision matrix: every action on every kind of object, for every kind of subject."""

from __future__ import annotations

import pytest

from boxes.errors import Denied
from catalog import Action, Catalog, DiagramSpec, ObjectType
from catalog.authorizer import OWNER, decide, decide_any
from catalog.bootstrap import add_admin
from catalog.model import APPLICABLE
from tests.catalog.conftest import BOX_TYPES, PASSWORD

T, A = ObjectType, Action
# One object of each kind, by (type, name) and the key of APPLICABLE it falls under.
KINDS = {
    "system": (T.SYSTEM, "system"),
    "schema": (T.SCHEMA, "s"),
    "input": (T.STREAM, "in1"),
    "derived": (T.STREAM, "q.mid"),
    "diagram": (T.DIAGRAM, "q"),
    "box": (T.BOX, "q.f"),
    "output": (T.OUTPUT, "out"),
}
SUBJECTS = ("owner", "granted", "ungranted", "inactive", "disabled", "none")
ALLOWED_RULES = {"owner": "owner", "granted": "grant"}
DENY_RULES = {
    "ungranted": "default_deny",
    "inactive": "default_deny",
    "disabled": "no_session",
    "none": "no_session",
}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """OWNER owns one object of each kind; GRANTED is given every action that applies to each.

    Built once for the whole matrix: deciding changes nothing.
    """
    cat = Catalog.open(f"sqlite:///{tmp_path_factory.mktemp('matrix') / 'c.db'}", bcrypt_rounds=4)
    add_admin(cat, "joe", PASSWORD)

    def login(name, roles=None):
        return cat.sessions.login(name, PASSWORD, roles)[1]

    admin = login("joe")
    for role in ("OWNER", "GRANTED", "OTHER"):
        cat.accounts.add_role(admin, role)
    for name, roles in {
        "olga": ["OWNER"],
        "gina": ["GRANTED"],
        "ursula": ["OTHER"],
        "ines": ["GRANTED", "OTHER"],
        "dora": ["GRANTED"],
    }.items():
        cat.accounts.add_user(admin, name, PASSWORD, roles)
    cat.grants.grant(admin, "OWNER", A.ADD, T.SYSTEM, "system")
    olga = login("olga")
    cat.objects.add_schema(olga, "s", {"fields": {"x": "long"}})
    cat.objects.add_stream(olga, "in1", "s")
    cat.objects.add_diagram(olga, DiagramSpec("q", ("in1",), ("f",), ("out",), ("mid",)))
    for kind, (type_, name) in KINDS.items():
        owner = admin if kind == "system" else olga
        for action in APPLICABLE[kind]:
            cat.grants.grant(owner, "GRANTED", action, type_, name)
    subjects = {
        "granted": login("gina"),
        "ungranted": login("ursula"),
        "inactive": login("ines", ["OTHER"]),
        "disabled": login("dora"),
        "none": None,
    }
    cat.accounts.set_enabled(admin, "dora", False)
    yield cat, subjects, admin, olga
    cat.close()


@pytest.mark.parametrize("who", SUBJECTS)
@pytest.mark.parametrize("kind", KINDS)
def test_decision_matrix(world, kind, who):
    cat, subjects, admin, olga = world
    subject = (admin if kind == "system" else olga) if who == "owner" else subjects[who]
    snapshot = cat.core.snapshot
    obj = snapshot.find(*KINDS[kind])
    for action in Action:
        decision = decide(subject, action, obj, snapshot)
        applies = action in APPLICABLE[kind]
        expected = who in ALLOWED_RULES and applies
        assert decision.allowed is expected, (action, decision)
        if expected:
            assert decision.rule == ALLOWED_RULES[who]
        else:
            assert decision.rule == (
                DENY_RULES.get(who) if applies or who in ("disabled", "none") else "not_applicable"
            ), (action, decision)


@pytest.mark.parametrize("kind", KINDS)
def test_a_grant_gives_that_action_and_no_other(cat, admin, people, login, kind):
    people({"olga": ["OWNER"], "gina": ["GRANTED"]})
    cat.grants.grant(admin, "OWNER", A.ADD, T.SYSTEM, "system")
    olga, gina = login("olga"), login("gina")
    cat.objects.add_schema(olga, "s", {"fields": {"x": "long"}})
    cat.objects.add_stream(olga, "in1", "s")
    cat.objects.add_diagram(olga, DiagramSpec("q", ("in1",), ("f",), ("out",), ("mid",)))
    type_, name = KINDS[kind]
    owner = admin if kind == "system" else olga
    for granted in sorted(APPLICABLE[kind]):
        cat.grants.grant(owner, "GRANTED", granted, type_, name)
        snapshot = cat.core.snapshot
        obj = snapshot.find(type_, name)
        allowed = {a for a in Action if decide(gina, a, obj, snapshot).allowed}
        implied = {A.VIEW_OBJECT} if granted is A.VIEW_CATALOG else set()
        assert allowed == {granted} | implied
        cat.grants.revoke(owner, "GRANTED", granted, type_, name)


def test_view_catalog_on_the_system_shows_every_object(cat, admin, people, login):
    people({"olga": ["OWNER"], "vic": ["AUDITOR"]})
    cat.grants.grant(admin, "OWNER", A.ADD, T.SYSTEM, "system")
    olga, vic = login("olga"), login("vic")
    cat.objects.add_schema(olga, "s", {"fields": {"x": "long"}})
    assert cat.objects.lookup(vic) == []
    cat.grants.grant(admin, "AUDITOR", A.VIEW_CATALOG, T.SYSTEM, "system")
    assert [o.name for o in cat.objects.lookup(vic)] == ["system", "s", *BOX_TYPES]
    schema = cat.core.snapshot.find(T.SCHEMA, "s")
    assert decide(vic, A.VIEW_OBJECT, schema, cat.core.snapshot).rule == "catalog"


def test_decide_refuses_an_object_from_elsewhere(cat, admin):
    snapshot = cat.core.snapshot
    ghost = snapshot.system.__class__(
        id=999, type=T.SCHEMA, name="ghost", owner_user="joe", owner_role="ADMIN"
    )
    assert decide(admin, A.VIEW_OBJECT, ghost, snapshot).rule == "no_object"
    assert decide(admin, A.VIEW_OBJECT, None, snapshot).rule == "no_object"


@pytest.mark.parametrize(
    "who, rule",
    [
        ("owner", "owner"),
        ("granted", "not_owner"),
        ("ungranted", "not_owner"),
        ("inactive", "not_owner"),
        ("disabled", "no_session"),
        ("none", "no_session"),
    ],
)
def test_owning_is_a_need_no_grant_meets(world, who, rule):
    cat, subjects, _, olga = world
    subject = olga if who == "owner" else subjects[who]
    snapshot = cat.core.snapshot
    diagram = snapshot.find(T.DIAGRAM, "q")
    decision = decide_any(subject, [(OWNER, diagram)], snapshot)
    assert (decision.allowed, decision.rule) == (who == "owner", rule)


def test_any_one_need_allows_and_the_first_refusal_explains(world):
    cat, subjects, admin, olga = world
    snapshot = cat.core.snapshot
    diagram, system = snapshot.find(T.DIAGRAM, "q"), snapshot.system
    owner_or_admin = [(OWNER, diagram), (A.CHANGE_SYSTEM, system)]
    assert decide_any(olga, owner_or_admin, snapshot).rule == "owner"
    assert decide_any(subjects["granted"], owner_or_admin, snapshot).rule == "grant"
    assert decide_any(admin, owner_or_admin, snapshot).reason == "role ADMIN owns system system"
    refused = decide_any(subjects["ungranted"], owner_or_admin, snapshot)
    assert not refused.allowed and refused.rule == "not_owner"
    assert decide_any(olga, [], snapshot).rule == "default_deny"


def test_an_operation_missing_from_the_policy_table_is_refused_and_audited(world):
    cat, _, admin, _ = world
    with pytest.raises(Denied):
        cat.authorize(admin, "diagrams.launch_missiles", {"name": "q"})
    cat.authorize(admin, "permissions.table")
    (entry,) = cat.audit(admin, event="diagrams.launch_missiles")
    assert (entry.allowed, entry.reason) == (False, "not in the policy table")


def test_a_refusal_names_the_objects_it_needs_rights_on_not_the_rule_s_arguments(
    cat, admin, people, login
):
    people({"vic": ["VIEWER"]})
    cat.objects.add_schema(admin, "s", {"fields": {"x": "long"}})
    cat.objects.add_stream(admin, "in5", "s")
    cat.grants.grant(admin, "VIEWER", A.VIEW_OBJECT, T.STREAM, "in5")
    with pytest.raises(Denied) as refused:
        cat.authorize(login("vic"), "permissions.revoke", {"type_": "stream", "name": "in5"})
    assert refused.value.details["needs"] == [
        "CHANGE_PERM on stream in5",
        "CHANGE_SYSTEM on the system",
    ]
    assert "<" not in str(refused.value), str(refused.value)
