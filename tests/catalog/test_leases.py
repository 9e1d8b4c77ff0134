"""Leases (catalog/leases.py) on both databases: one holder at a time, by the database's clock,
among several catalogs (servers) on one database."""

from __future__ import annotations

import threading

from catalog import Catalog


def test_a_lease_is_held_by_one_and_renewed_by_it_alone(cat, db_url):
    other = Catalog.open(db_url, bcrypt_rounds=4)  # a second server on the same database
    try:
        first = cat.leases.take("runtime", "a", 30, "http://a.example:8080")
        assert first.held and first.holder == "a"
        refused = other.leases.take("runtime", "b", 30, "http://b.example:8080")
        assert not refused.held and refused.holder == "a"
        assert refused.address == "http://a.example:8080"  # where b passes ingestion on
        assert 25 < refused.seconds_left <= 30
        assert cat.leases.take("runtime", "a", 30).held  # renewed
        assert other.leases.holder("runtime").holder == "a"
        assert other.leases.take("other-thing", "b", 30).held  # leases are per name
    finally:
        other.close()


def test_a_lease_not_renewed_in_time_goes_to_the_next_taker(cat):
    assert cat.leases.take("runtime", "a", 0).held  # its holder's time is over at once
    assert cat.leases.holder("runtime") is None
    taken = cat.leases.take("runtime", "b", 30)
    assert taken.held
    assert not cat.leases.take("runtime", "a", 30).held  # the old holder finds it gone


def test_release_gives_the_lease_up_only_for_its_holder(cat):
    cat.leases.take("runtime", "a", 30)
    cat.leases.release("runtime", "b")  # not b's: nothing happens
    assert cat.leases.holder("runtime").holder == "a"
    cat.leases.release("runtime", "a")
    assert cat.leases.holder("runtime") is None
    assert cat.leases.take("runtime", "b", 30).held


def test_servers_taking_a_free_lease_at_once_give_it_to_exactly_one(cat, db_url):
    catalogs = [Catalog.open(db_url, bcrypt_rounds=4) for _ in range(4)]
    start = threading.Barrier(len(catalogs))
    held: list[str] = []

    def take(i: int) -> None:
        start.wait()
        for _ in range(20):
            if catalogs[i].leases.take("runtime", f"s{i}", 30).held:
                held.append(f"s{i}")

    threads = [threading.Thread(target=take, args=(i,)) for i in range(len(catalogs))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for c in catalogs:
            c.close()
    assert len(set(held)) == 1 and len(held) == 20  # the first taker, renewing each time
    assert cat.leases.holder("runtime").holder == held[0]
