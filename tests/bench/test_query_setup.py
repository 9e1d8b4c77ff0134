"""The query-setup experiment's secured variant really takes the server's security steps:
refused where the server would refuse, and leaving the same audited records behind."""

from __future__ import annotations

import pytest

from bench.catalog_setup import PASSWORD, setup
from bench.query_setup import _deployed, document
from boxes.errors import Denied, Unauthenticated
from catalog import Action, Catalog, ObjectType


@pytest.fixture
def world(tmp_path):
    cat = Catalog.open(f"sqlite:///{tmp_path / 'bench.db'}", bcrypt_rounds=4)
    joe, _ = setup(cat, background=0)
    yield cat, joe, cat.sessions.login("al", PASSWORD)[0]
    cat.close()


def test_the_secured_variant_creates_authorizes_and_records_the_diagram_running(world):
    cat, joe, token = world
    _deployed(cat, token, document(6))
    diagram = cat.objects.get(joe, ObjectType.DIAGRAM, "q6")
    assert diagram.status == "running" and diagram.owner_role == "CUSTOMER1"
    assert sum(o.parent_id == diagram.id for o in cat.core.snapshot.objects.values()) == 129
    assert [e.event for e in cat.audit(joe, user="al", limit=2)] == ["query_status", "diagram_add"]


@pytest.mark.parametrize(
    "revoked",
    [(Action.ADD, ObjectType.SYSTEM, "system"), (Action.READ_TUPLE, ObjectType.STREAM, "in5")],
)
def test_the_secured_variant_is_refused_without_a_permission(world, revoked):
    cat, joe, token = world
    cat.grants.revoke(joe, "CUSTOMER1", *revoked)
    with pytest.raises(Denied):
        _deployed(cat, token, document(6))
    assert cat.core.snapshot.find(ObjectType.DIAGRAM, "q6") is None


def test_the_secured_variant_needs_an_open_session(world):
    cat, _, token = world
    cat.sessions.logout(cat.sessions.resolve(token))
    with pytest.raises(Unauthenticated):
        _deployed(cat, token, document(1))
