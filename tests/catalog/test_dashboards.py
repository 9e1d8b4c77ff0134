"""Each user's dashboards in the catalog, on SQLite and PostgreSQL: only the caller's own, a
limit on how many and how large, and gone with their user."""

from __future__ import annotations

import pytest

from boxes.errors import Conflict, InvalidInput, NotFound, Unauthenticated
from catalog.dashboards import MAX_BYTES, MAX_DASHBOARDS
from tests.catalog.conftest import PASSWORD, sql

TABLE = [{"output": "out1", "view": "table"}]
CHART = [{"output": "out1", "view": "chart", "options": {"field": "price"}}]


@pytest.fixture
def al(cat, admin):
    cat.accounts.add_role(admin, "CUSTOMER1")
    cat.accounts.add_user(admin, "al", PASSWORD, ["CUSTOMER1"])
    return cat.sessions.login("al", PASSWORD)[1]


def test_a_dashboard_is_stored_replaced_and_deleted(cat, al, clock):
    cat.dashboards.put(al, "main", TABLE)
    clock.now += 5
    cat.dashboards.put(al, "main", CHART)
    cat.dashboards.put(al, "ships", TABLE + CHART)
    assert [(d.name, d.panels) for d in cat.dashboards.mine(al)] == [
        ("main", CHART),
        ("ships", TABLE + CHART),
    ]
    assert cat.dashboards.get(al, "main").changed_at == clock.now
    cat.dashboards.delete(al, "main")
    assert [d.name for d in cat.dashboards.mine(al)] == ["ships"]
    with pytest.raises(NotFound):
        cat.dashboards.get(al, "main")
    with pytest.raises(NotFound):
        cat.dashboards.delete(al, "main")


def test_another_users_dashboard_of_the_same_name_is_not_there(cat, admin, al):
    cat.dashboards.put(al, "main", TABLE)
    with pytest.raises(NotFound) as err:
        cat.dashboards.get(admin, "main")
    assert err.value.message == "no dashboard named 'main'"  # as when nobody has one
    with pytest.raises(NotFound):
        cat.dashboards.delete(admin, "main")  # an administrator is no exception
    assert cat.dashboards.mine(admin) == []
    cat.dashboards.put(admin, "main", CHART)
    assert cat.dashboards.get(al, "main").panels == TABLE


def test_a_user_keeps_a_limited_number_of_dashboards_of_limited_size(cat, al):
    for n in range(MAX_DASHBOARDS):
        cat.dashboards.put(al, f"d{n}", [])
    with pytest.raises(Conflict) as err:
        cat.dashboards.put(al, "one_more", TABLE)
    assert err.value.code == "TOO_MANY_DASHBOARDS"
    cat.dashboards.put(al, "d0", TABLE)  # replacing one is not one more
    big = [{"output": "out1", "view": "table", "options": {"x": "y" * MAX_BYTES}}]
    with pytest.raises(InvalidInput) as err:
        cat.dashboards.put(al, "d1", big)
    assert err.value.code == "DASHBOARD_TOO_LARGE"
    assert cat.dashboards.get(al, "d1").panels == []
    with pytest.raises(InvalidInput) as err:
        cat.dashboards.put(al, "no good", TABLE)
    assert err.value.code == "INVALID_NAME"


def test_deleting_a_user_deletes_its_dashboards(cat, admin, al):
    cat.dashboards.put(al, "main", TABLE)
    cat.dashboards.put(admin, "main", TABLE)
    cat.accounts.delete_user(admin, "al")
    with cat.core.store.reader() as conn:
        owners = sql(conn, "SELECT u.name FROM dashboards d JOIN users u ON u.id = d.user_id")
        assert owners.scalars().all() == ["joe"]
        assert sql(conn, "SELECT count(*) FROM dashboards").scalar() == 1


def test_a_closed_session_reaches_no_dashboard(cat, al):
    cat.dashboards.put(al, "main", TABLE)
    cat.sessions.logout(al)
    for call in (
        lambda: cat.dashboards.mine(al),
        lambda: cat.dashboards.get(al, "main"),
        lambda: cat.dashboards.put(al, "main", []),
        lambda: cat.dashboards.delete(al, "main"),
    ):
        with pytest.raises(Unauthenticated):
            call()
