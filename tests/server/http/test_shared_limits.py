"""Limits several servers share through Redis (``server/limits/store.py``): the ingestion rate
behaves alike in memory and in Redis, two servers cannot both spend the last tokens, every key
expires, an unreachable Redis refuses rather than lets through, and two apps on one Redis
throttle logins and ingestion together, as do two ``sluice serve`` processes on one PostgreSQL
catalog."""

from __future__ import annotations

import shutil
import threading

import pytest
from serverkit import PASSWORD, Server, overrides

from boxes import codes
from boxes.errors import RateLimited, Unavailable
from server.app import close_app, create_app
from server.limits.rate import TupleRate
from server.limits.store import PREFIX, MemoryStore, RedisStore
from server.limits.throttle import Throttle
from tests.redisserver import free_port

API = "/api/v1"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _wait(rate: TupleRate, session: int, count: int) -> int:
    try:
        rate.take(session, count)
    except RateLimited as refused:
        return refused.retry_after
    return 0


def test_the_tuple_rate_is_a_bucket_per_session(limit_store):
    clock = Clock()
    rate = TupleRate(lambda: 10, limit_store, clock)
    assert _wait(rate, 1, 10) == 0  # a second's worth at once
    assert _wait(rate, 1, 1) == 1
    assert _wait(rate, 2, 10) == 0  # another session has its own bucket
    clock.now += 0.5
    assert _wait(rate, 1, 5) == 0
    assert _wait(rate, 1, 1) == 1
    assert _wait(rate, 1, 25) == 3  # more than a burst: the wait says how long
    clock.now += 100
    assert _wait(rate, 1, 10) == 0  # refilled, never beyond one second's worth
    assert _wait(rate, 1, 1) == 1


@pytest.mark.parametrize("stores", ["memory", "redis", "two servers on redis"])
def test_concurrent_takers_never_spend_more_than_the_bucket(redis_url, stores):
    """Threads of one server, or of two servers each with its own store on one Redis, race
    for one session's tokens on a stopped clock: exactly the bucket is admitted."""
    count = {"memory": 0, "redis": 1, "two servers on redis": 2}[stores]
    shared = [RedisStore(redis_url) for _ in range(count)] or [MemoryStore()]
    clock = Clock()
    rates = [TupleRate(lambda: 300, store, clock) for store in shared]
    admitted = [0] * 8

    def take(n: int) -> None:
        while _wait(rates[n % len(rates)], 7, 1) == 0:
            admitted[n] += 1

    threads = [threading.Thread(target=take, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sum(admitted) == 300
    for store in shared:
        store.close()


def test_every_key_is_namespaced_and_expires(redis_server, redis_url):
    store = RedisStore(redis_url)
    throttle, rate = Throttle(lambda: 2, store), TupleRate(lambda: 100, store)
    for _ in range(3):
        throttle.failed("joe:x", "::1")
    rate.take(5, 10)
    names = redis_server.client.keys("*")
    assert len(names) == 3  # the address, the user at the address, the session's bucket
    for name in names:
        assert name.decode().startswith(PREFIX)
        ttl = redis_server.client.pttl(name)
        assert 0 < ttl <= (Throttle.MAX_DELAY + Throttle.QUIET) * 1000
    throttle.succeeded("joe:x", "::1")
    assert len(redis_server.client.keys("*")) == 2
    store.close()


def test_an_unreachable_redis_refuses_rather_than_lets_through():
    store = RedisStore(f"redis://127.0.0.1:{free_port()}/0")  # nobody listens there
    for attempt in (
        lambda: Throttle(lambda: 10, store).check("joe", "a"),
        lambda: Throttle(lambda: 10, store, Clock()).failed("joe", "a"),
        lambda: TupleRate(lambda: 10, store, Clock()).take(1, 1),
    ):
        with pytest.raises(Unavailable) as refused:
            attempt()
        assert refused.value.code == codes.LIMITS_UNAVAILABLE
    store.close()


@pytest.fixture
def two_apps(tmp_path, template, redis_url):
    """Two servers (apps on data directories of their own) on one catalog and one Redis, as
    behind a load balancer; logins limited to 2 failures a minute, ingestion to 1 tuple/s (the
    bucket takes a second to refill, far longer than two requests take on a loaded machine)."""
    shared = tmp_path / "shared"
    shutil.copytree(template[0], shared)
    settings = {
        "catalog_url": f"sqlite:///{shared / 'catalog.sqlite'}",
        "redis_url": redis_url,
        "login_attempts_per_minute": 2,
        "ingest_tuples_per_second": 1,
    }
    apps = [create_app(overrides(tmp_path / name, **settings)) for name in ("a", "b")]
    yield [app.test_client() for app in apps]
    for app in apps:
        close_app(app)


def _login(client, password: str):
    return client.post(f"{API}/auth/login", json={"user": "ed", "password": password})


def test_failed_logins_through_one_server_throttle_the_other(two_apps, template):
    a, b = two_apps
    assert _login(a, "wrong").status_code == 401
    assert _login(b, "wrong").status_code == 401  # the second failure, through B, reaches the limit
    for client in (a, b):
        refused = _login(client, template[1]["ed"])  # even the right password waits now
        assert refused.status_code == 429
        assert refused.get_json()["error"]["code"] == "TOO_MANY_LOGINS"


def test_one_session_has_one_ingestion_rate_across_servers(two_apps, template):
    a, b = two_apps
    headers = {"Authorization": f"Bearer {template[2]['ed']}"}
    tuples = [{"x": 1}]  # the whole bucket
    passed = a.post(f"{API}/streams/feed/tuples", json=tuples, headers=headers)
    # past the rate limit; this server runs no Spark runtime, so the append itself is refused
    assert passed.get_json()["error"]["code"] == "RUNTIME_UNAVAILABLE"
    refused = b.post(f"{API}/streams/feed/tuples", json=tuples, headers=headers)
    assert refused.status_code == 429
    assert refused.get_json()["error"]["code"] == "INGEST_RATE_LIMITED"


def test_a_server_whose_redis_is_down_refuses_logins_with_503(tmp_path, template):
    shutil.copytree(template[0], tmp_path / "data")
    app = create_app(overrides(tmp_path / "data", redis_url=f"redis://127.0.0.1:{free_port()}/0"))
    try:
        answer = _login(app.test_client(), template[1]["ed"])
        assert answer.status_code == 503
        assert answer.get_json()["error"]["code"] == "LIMITS_UNAVAILABLE"
    finally:
        close_app(app)


@pytest.mark.slow  # two `sluice serve` processes, which no fixture tells
def test_two_serve_processes_on_one_catalog_and_one_redis_throttle_logins_together(
    tmp_path, postgres, redis_url
):
    """The production shape without Spark: two ``sluice serve`` processes, one PostgreSQL
    catalog, one Redis, one signing secret."""
    import requests

    settings = {
        "catalog_url": postgres.blank(),
        "redis_url": redis_url,
        "secret_key": "s" * 48,
        "runtime": False,
        "admin_user": "joe",
        "admin_password": PASSWORD,
        "login_attempts_per_minute": 2,
    }
    servers = []
    try:
        for name in ("a", "b"):
            (tmp_path / name).mkdir()
            servers.append(Server(tmp_path / name, **settings))
            servers[-1].start()  # one after the other: the second finds the catalog migrated

        def login(server: Server, password: str) -> requests.Response:
            body = {"user": "joe", "password": password}
            return requests.post(f"{server.url}{API}/auth/login", json=body, timeout=30)

        a, b = servers
        token = login(a, PASSWORD).json()["token"]
        mine = {"Authorization": f"Bearer {token}"}
        assert requests.get(f"{b.url}{API}/auth/whoami", headers=mine, timeout=30).ok
        assert login(a, "wrong").status_code == 401
        assert login(b, "wrong").status_code == 401
        for server in servers:
            refused = login(server, PASSWORD)
            assert refused.status_code == 429, refused.text
            assert refused.json()["error"]["code"] == "TOO_MANY_LOGINS"
    finally:
        for server in servers:
            if server.running():
                server.kill()
