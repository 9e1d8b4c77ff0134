"""A real catalog, with a clock the test moves by hand, on each backend: a SQLite file in a temp
dir, and a database of its own on the suite's PostgreSQL cluster (``postgres`` in
tests/conftest.py). Every test that takes ``db_url`` (or ``cat``) runs on both."""

from __future__ import annotations

import itertools
import shutil

import pytest
from sqlalchemy import inspect, text

from boxes import registry
from catalog import Catalog
from catalog.bootstrap import add_admin
from catalog.store import open_store

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


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def backend(request):
    return request.param


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory):
    """A SQLite catalog file as its migrations leave it, made once: a test gets a copy (copying
    costs a millisecond, migrating a hundred)."""
    path = tmp_path_factory.mktemp("migrated") / "catalog.db"
    open_store(f"sqlite:///{path}").close()
    return path


@pytest.fixture
def new_db(request, backend, tmp_path):
    """``new_db(blank=False)``: the URL of a new catalog database on the test's backend, migrated
    unless ``blank``. On SQLite a new file (a copy of ``migrated_sqlite``, or none yet); on
    PostgreSQL the cluster's one database (or its blank one) emptied: a test has one at a time."""
    if backend == "sqlite":
        names = itertools.count()

        def new_file(blank: bool = False) -> str:
            path = tmp_path / f"catalog{next(names)}.db"
            if not blank:
                shutil.copyfile(request.getfixturevalue("migrated_sqlite"), path)
            return f"sqlite:///{path}"

        return new_file
    cluster = request.getfixturevalue("postgres")
    return lambda blank=False: cluster.blank() if blank else cluster.fresh()


@pytest.fixture
def db_url(new_db):
    return new_db()


@pytest.fixture
def cat(db_url, clock):
    catalog = Catalog.open(db_url, bcrypt_rounds=4, clock=clock)
    yield catalog
    catalog.close()


def tables(cat) -> list[str]:
    """The names of the catalog's tables, on either backend (Alembic's own among them)."""
    with cat.core.store.reader() as conn:
        return sorted(inspect(conn).get_table_names())


def sql(conn, statement: str, **params):
    """A test's own look at (or change to) the tables, with named binds (``:name``)."""
    return conn.execute(text(statement), params)


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
