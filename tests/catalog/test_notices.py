"""PostgreSQL's change notices: a lost notice connection loses no change. While it is down the
store asks the database at every access (as polling would); once back, notices flow again."""

from __future__ import annotations

import time

import psycopg

from catalog import Catalog
from catalog.bootstrap import add_admin
from catalog.pgstore import LISTENER
from tests.catalog.conftest import PASSWORD


def wait_until(condition, what: str, timeout: float = 10.0) -> None:
    """The listener's state changes in its own thread, and nothing signals it outside."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.01)  # poll: the listener thread signals nothing outside


def test_changes_made_while_the_notices_are_lost_are_seen(postgres, clock):
    url = postgres.fresh()
    cat = Catalog.open(url, bcrypt_rounds=4, clock=clock)
    other = Catalog.open(url, bcrypt_rounds=4, clock=clock)
    try:
        add_admin(cat, "joe", PASSWORD)
        joe = other.sessions.login("joe", PASSWORD)[1]
        other.accounts.add_role(joe, "CUSTOMER1")
        other.accounts.add_user(joe, "al", PASSWORD, ["CUSTOMER1"])
        cat.core.store.settle()
        assert cat.core.snapshot.users_by_name["al"].enabled
        with psycopg.connect(url, autocommit=True) as admin:
            (ended,) = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE application_name = %s",
                (LISTENER,),
            ).fetchone()
        assert ended == 2  # both catalogs' listeners
        wait_until(lambda: not cat.core.store.listening, what="the listener noticed its loss")
        other.accounts.set_enabled(joe, "al", False)  # no notice reaches cat
        assert not cat.core.snapshot.users_by_name["al"].enabled
        wait_until(lambda: cat.core.store.listening, what="the listener reconnected")
        other.accounts.set_enabled(joe, "al", True)
        cat.core.store.settle()
        assert cat.core.snapshot.users_by_name["al"].enabled
    finally:
        other.close()
        cat.close()
