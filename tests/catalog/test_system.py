"""System settings an administrator changed: kept across reopening, all or none, audited."""

from __future__ import annotations

import pytest

from boxes.errors import Denied, InvalidInput
from catalog import Catalog

DEFAULTS = {"a": 10, "b": 20}


def changes(cat, admin) -> list[dict]:
    return [e.details for e in reversed(cat.audit(admin, event="system_settings", allowed=True))]


def test_changes_outlive_the_catalog_and_a_reset_restores_the_default(cat, admin, db_url):
    assert cat.system.change(admin, {"a": 1, "b": 2}, DEFAULTS) == {"a": 1, "b": 2}
    cat.close()
    reopened = Catalog.open(db_url, bcrypt_rounds=4)
    assert reopened.system.stored() == {"a": 1, "b": 2}
    assert reopened.system.change(admin, {"a": None}, DEFAULTS) == {"a": 10, "b": 2}
    assert reopened.system.stored() == {"b": 2}
    assert changes(reopened, admin) == [
        {"setting": "a", "old": 10, "new": 1},
        {"setting": "b", "old": 20, "new": 2},
        {"setting": "a", "old": 1, "new": 10, "reset": True},
    ]
    reopened.close()


def test_a_change_that_fails_on_one_setting_changes_none(cat, admin):
    cat.system.change(admin, {"a": 1}, DEFAULTS)
    with pytest.raises(TypeError):
        cat.system.change(admin, {"a": 5, "b": object()}, DEFAULTS)  # "b" cannot be stored
    with pytest.raises(InvalidInput) as refused:
        cat.system.change(admin, {"a": 5, "c": 1}, DEFAULTS)
    assert refused.value.code == "UNKNOWN_SETTING"
    assert cat.system.stored() == {"a": 1}
    assert changes(cat, admin) == [{"setting": "a", "old": 10, "new": 1}]


def test_only_an_administrator_changes_settings_and_a_refusal_is_audited(cat, admin, people, login):
    people({"al": ["CUSTOMER1"]})
    with pytest.raises(Denied):
        cat.system.change(login("al"), {"a": 1}, DEFAULTS)
    assert cat.system.stored() == {}
    (denied,) = cat.audit(admin, event="system_settings")
    assert (denied.user, denied.allowed) == ("al", False)
