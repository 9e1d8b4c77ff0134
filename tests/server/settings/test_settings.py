"""System settings changed by an administrator outlive a killed server, over the config file,
until reset: a real ``sluice serve`` process (without Spark) on a loopback port."""

from __future__ import annotations

import requests
from serverkit import PASSWORD, Client


def test_changed_settings_are_in_force_after_a_restart_until_reset(serve):
    server = serve(runtime=False, admin_user="joe", admin_password=PASSWORD, max_batch_tuples=100)
    server.start()
    joe = Client(server.url, "joe", PASSWORD)
    joe.call("POST", "/schemas", 201, json={"name": "s", "fields": {"x": "long"}})
    joe.call("POST", "/streams", 201, json={"name": "in1", "schema": "s"})
    joe.call(
        "PATCH", "/system/settings", json={"max_batch_tuples": 3, "login_attempts_per_minute": 2}
    )
    server.kill()
    server.start()

    ceilings = {
        "max_windows_per_tuple": 1_000,
        "max_window_seconds": 7 * 24 * 3600,
        "max_join_bound_seconds": 24 * 3600,
        "max_open_windows": 100_000,
        "max_window_rows": 100_000,
        "max_state_rows": 5_000_000,
        "max_rewrite_variants": 4,
    }
    assert joe.call("GET", "/system/settings") == {
        "settings": {
            "max_batch_tuples": 3,
            "login_attempts_per_minute": 2,
            "ingest_tuples_per_second": 50_000,
            **ceilings,
        },
        "configured": {
            "max_batch_tuples": 100,
            "login_attempts_per_minute": 10,
            "ingest_tuples_per_second": 50_000,
            **ceilings,
        },
    }
    refused = joe.call("POST", "/streams/in1/tuples", 413, json=[{"x": 1}] * 4)
    assert refused["error"]["details"] == {"limit": 3}
    # Within the limit, only the missing Spark runtime refuses the batch.
    joe.call("POST", "/streams/in1/tuples", 503, json=[{"x": 1}] * 3)
    login = f"{server.url}/api/v1/auth/login"
    for _ in range(2):
        assert (
            requests.post(
                login, json={"user": "joe", "password": "guess guess"}, timeout=60
            ).status_code
            == 401
        )
    assert (
        requests.post(login, json={"user": "joe", "password": PASSWORD}, timeout=60).status_code
        == 429
    )

    joe.call("PATCH", "/system/settings", json={"max_batch_tuples": None})
    server.kill()
    server.start()
    settings = joe.call("GET", "/system/settings")["settings"]
    assert (settings["max_batch_tuples"], settings["login_attempts_per_minute"]) == (100, 2)


def test_a_raised_batch_limit_reaches_the_runtime(live):
    joe = Client(live.url, "joe", PASSWORD)
    joe.call("POST", "/schemas", 201, json={"name": "s", "fields": {"x": "long"}})
    joe.call("POST", "/streams", 201, json={"name": "in1", "schema": "s"})
    joe.call("PATCH", "/system/settings", json={"max_batch_tuples": 10_001})
    assert joe.call("POST", "/streams/in1/tuples", json=[{"x": 1}] * 10_001)["count"] == 10_001
