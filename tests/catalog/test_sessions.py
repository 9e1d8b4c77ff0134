"""Login, logout, expiry, and the end of every session of a disabled or deleted user."""

from __future__ import annotations

import pytest

from boxes.errors import Denied, InvalidInput, Unauthenticated
from catalog import Action, Catalog, ObjectType
from tests.catalog.conftest import PASSWORD, sql, tables

T, A = ObjectType, Action


@pytest.fixture
def al(cat, admin, people):
    people({"al": ["CUSTOMER1", "CUSTOMER2"]})
    cat.objects.add_schema(admin, "s", {"fields": {"x": "long"}})
    for stream in ("in1", "in2"):
        cat.objects.add_stream(admin, stream, "s")
    cat.grants.grant(admin, "CUSTOMER1", A.READ_TUPLE, T.STREAM, "in1")
    cat.grants.grant(admin, "CUSTOMER2", A.READ_TUPLE, T.STREAM, "in2")
    return "al"


@pytest.mark.parametrize(
    "name, password",
    [
        ("al", "wrong password"),
        ("nobody", PASSWORD),
        ("al", ""),
        ("al", None),
        (None, PASSWORD),
        ("a\0l", PASSWORD),
        ("al", "x" * 100),
        ("al", PASSWORD + "\0"),
    ],
)
def test_every_credential_failure_looks_the_same(cat, al, name, password):
    with pytest.raises(Unauthenticated) as err:
        cat.sessions.login(name, password)
    assert str(err.value) == "[UNAUTHENTICATED] invalid credentials"
    assert cat.audit(cat.sessions.login("joe", PASSWORD)[1], event="login_failed")


def test_a_disabled_user_cannot_log_in_and_is_told_nothing_more(cat, admin, al):
    cat.accounts.set_enabled(admin, "al", False)
    with pytest.raises(Unauthenticated, match="invalid credentials"):
        cat.sessions.login("al", PASSWORD)
    (entry,) = cat.audit(admin, event="login_failed")
    assert entry.reason == "user disabled" and entry.details == {"attempted": "al"}


def test_a_session_activates_only_the_chosen_roles(cat, al):
    token, both = cat.sessions.login("al", PASSWORD)
    _, one = cat.sessions.login("al", PASSWORD, ["CUSTOMER1"])
    assert both.roles == {"CUSTOMER1", "CUSTOMER2"}
    assert cat.sessions.readable_sources(both) == 0b11
    assert cat.sessions.readable_sources(one) == 0b01
    assert cat.sessions.resolve(token) == both
    assert cat.sessions.login("al", PASSWORD, "CUSTOMER2")[1].roles == {"CUSTOMER2"}
    with pytest.raises(Denied) as err:
        cat.sessions.login("al", PASSWORD, ["ADMIN"])
    assert err.value.code == "ROLE_NOT_PLAYABLE"
    with pytest.raises(InvalidInput) as empty:
        cat.sessions.login("al", PASSWORD, [])
    assert empty.value.code == "ROLES_EMPTY" and "at least one role" in str(empty.value)


@pytest.mark.parametrize("end", ["logout", "disable", "delete", "expire", "new_password"])
def test_ending_a_session_takes_effect_at_once(cat, admin, al, clock, end):
    token, subject = cat.sessions.login("al", PASSWORD)
    assert cat.sessions.readable_sources(subject) == 0b11
    {
        "logout": lambda: cat.sessions.logout(subject),
        "disable": lambda: cat.accounts.set_enabled(admin, "al", False),
        "delete": lambda: cat.accounts.delete_user(admin, "al"),
        "expire": lambda: setattr(clock, "now", clock.now + cat.core.settings.session_ttl),
        "new_password": lambda: cat.accounts.set_password(admin, "al", "a new password"),
    }[end]()
    assert cat.sessions.readable_sources(subject) == 0
    with pytest.raises(Unauthenticated):
        cat.sessions.resolve(token)
    with pytest.raises(Unauthenticated):
        cat.objects.lookup(subject)


def test_logging_in_again_does_not_revive_a_logged_out_session(cat, al):
    token, old = cat.sessions.login("al", PASSWORD)
    cat.sessions.logout(old)
    _, new = cat.sessions.login("al", PASSWORD)
    assert new.session_id != old.session_id
    with pytest.raises(Unauthenticated):
        cat.sessions.logout(old)
    assert cat.sessions.readable_sources(old) == 0
    with pytest.raises(Unauthenticated):
        cat.sessions.resolve(token)


def test_enabling_again_does_not_revive_old_sessions(cat, admin, al):
    token, subject = cat.sessions.login("al", PASSWORD)
    cat.accounts.set_enabled(admin, "al", False)
    cat.accounts.set_enabled(admin, "al", True)
    with pytest.raises(Unauthenticated):
        cat.sessions.resolve(token)
    assert cat.sessions.readable_sources(subject) == 0
    assert cat.sessions.readable_sources(cat.sessions.login("al", PASSWORD)[1]) == 0b11


def test_taking_a_role_away_removes_it_from_open_sessions(cat, admin, al):
    token, subject = cat.sessions.login("al", PASSWORD)
    cat.accounts.unassign_role(admin, "al", "CUSTOMER2")
    assert cat.sessions.readable_sources(subject) == 0b01
    assert cat.sessions.resolve(token).roles == {"CUSTOMER1"}


@pytest.mark.parametrize("token", ["", "not-a-token", None, 42, "x" * 10_000])
def test_a_bad_token_resolves_to_nothing(cat, token):
    with pytest.raises(Unauthenticated):
        cat.sessions.resolve(token)


def test_neither_password_nor_token_is_stored(cat, al, tmp_path):
    token, _ = cat.sessions.login("al", PASSWORD)
    if cat.core.store.dialect.name == "sqlite":  # the file and its write-ahead log
        raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    else:
        names = tables(cat)
        with cat.core.store.reader() as conn:
            rows = [sql(conn, f"SELECT * FROM {t}").fetchall() for t in names]
        raw = repr(rows).encode()
        assert b"joe" in raw  # the rows are there
    assert PASSWORD.encode() not in raw and token.encode() not in raw
    with cat.core.store.reader() as conn:
        assert sql(conn, "SELECT count(*) FROM sessions").scalar() == 2


def test_a_user_changes_its_own_password_and_its_other_sessions_end(cat, admin, al):
    other_token, _ = cat.sessions.login("al", PASSWORD)
    token, me = cat.sessions.login("al", PASSWORD)
    with pytest.raises(Denied) as wrong:
        cat.accounts.change_own_password(me, "not the old one", "a brand new password")
    assert wrong.value.code == "WRONG_PASSWORD"
    cat.accounts.change_own_password(me, PASSWORD, "a brand new password")
    assert cat.sessions.resolve(token) == me
    with pytest.raises(Unauthenticated):
        cat.sessions.resolve(other_token)
    with pytest.raises(Unauthenticated):
        cat.sessions.login("al", PASSWORD)
    cat.sessions.login("al", "a brand new password")
    assert [e.allowed for e in cat.audit(admin, event="password_change")] == [True, False]


def test_raising_the_bcrypt_cost_rehashes_at_the_next_login(cat, al, db_url, clock):
    def cost():
        with cat.core.store.reader() as conn:
            hashed = sql(conn, "SELECT password_hash FROM users WHERE name = 'al'").scalar()
        return hashed.split("$")[2]

    assert cost() == "04"
    stronger = Catalog.open(db_url, bcrypt_rounds=5, clock=clock)
    try:
        stronger.sessions.login("al", PASSWORD)
    finally:
        stronger.close()
    assert cost() == "05"
    cat.sessions.login("al", PASSWORD)
    assert cost() == "05"
