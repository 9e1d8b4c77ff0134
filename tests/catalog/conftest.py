"""A real catalog on a SQLite file in a temp dir, with a clock the test moves by hand."""

from __future__ import annotations

import pytest

from boxes import registry
from catalog import Catalog
from catalog.bootstrap import add_admin

PASSWORD = "correct horse battery"
BOX_TYPES = sorted(registry.operators())  # a lookup lists box types last, by name


class Clock:
    """Session expiry is tested by moving this clock, never by sleeping."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def db_url(tmp_path):
    return f"sqlite:///{tmp_path / 'catalog.db'}"


@pytest.fixture
def cat(db_url, clock):
    catalog = Catalog.open(db_url, bcrypt_rounds=4, clock=clock)
    yield catalog
    catalog.close()


@pytest.fixture
def admin(cat):
    """Joe, the first administrator, logged in with the ADMIN role."""
    add_admin(cat, "joe", PASSWORD)
    return cat.sessions.login("joe", PASSWORD)[1]


@pytest.fixture
def login(cat):
    """``login(name, roles=None)``: a session for a user created with PASSWORD."""

    def _login(name, roles=None):
        return cat.sessions.login(name, PASSWORD, roles)[1]

    return _login


@pytest.fixture
def people(cat, admin):
    """``people({"al": ["CUSTOMER1"], ...})``: create missing roles, then the users."""

    def _people(users):
        for roles in users.values():
            for role in roles:
                if role not in cat.core.snapshot.roles:
                    cat.accounts.add_role(admin, role)
        for name, roles in users.items():
            cat.accounts.add_user(admin, name, PASSWORD, roles)

    return _people
