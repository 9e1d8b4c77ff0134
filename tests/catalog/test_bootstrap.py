"""The first administrator and the demo seed of the paper's scenario."""

from __future__ import annotations

import borealis_figures as fig
import pytest

from boxes.errors import Conflict
from catalog import ObjectType as T
from catalog.bootstrap import DEMO_USERS, add_admin, ensure_admin, seed_demo
from tests.catalog.conftest import BOX_TYPES, PASSWORD


def test_the_first_admin_creates_the_system_object(cat):
    assert ensure_admin(cat, "root", PASSWORD)
    assert not ensure_admin(cat, "other", PASSWORD)
    root = cat.sessions.login("root", PASSWORD)[1]
    assert [(o.name, o.owner_user, o.owner_role) for o in cat.objects.lookup(root)] == [
        (name, "root", "ADMIN") for name in ["system", *BOX_TYPES]
    ]
    assert add_admin(cat, "second", PASSWORD)
    assert not add_admin(cat, "second", "another password")
    assert [u.name for u in cat.accounts.users(root)] == ["root", "second"]
    cat.accounts.set_enabled(root, "root", False)
    assert cat.core.snapshot.administrators() == ["second"]


def test_the_demo_is_the_paper_at_the_end_of_figure_8(cat):
    secrets = seed_demo(cat)
    assert set(secrets) == set(DEMO_USERS) and len(set(secrets.values())) == 4
    subjects = {name: cat.sessions.login(name, secrets[name])[1] for name in DEMO_USERS}
    table = {(r.name, r.role, r.type) for r in cat.grants.table(subjects["joe"])}
    assert {(n, r) for n, r, t in table if t is not T.BOX_TYPE} == fig.JOE_GRANTED
    # operator-based access control, the paper's future work: Al may use every box type
    assert {(n, r) for n, r, t in table if t is T.BOX_TYPE} == {
        (n, r) for n in BOX_TYPES for r in ("ADMIN", "CUSTOMER1")
    }
    for name, expected in (("ed", ["s", "in1", "in2"]), ("al", ["s", "in1", "in2"]), ("bob", [])):
        assert [o.name for o in cat.objects.lookup(subjects[name])] == expected
    assert cat.sessions.readable_sources(subjects["al"]) == 0b11
    with pytest.raises(Conflict):
        seed_demo(cat)
