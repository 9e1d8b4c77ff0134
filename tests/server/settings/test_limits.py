"""The limits in force change at run time while the configuration stays as it was loaded."""

from __future__ import annotations

import pytest

from server.settings.config import load_settings
from server.settings.limits import LiveLimits


def test_followers_get_the_limits_now_and_after_each_change():
    live = LiveLimits(load_settings(overrides={"max_batch_tuples": 100}))
    seen: list[int] = []
    live.follow(lambda values: seen.append(values["max_batch_tuples"]))
    stored = []

    def store(configured):
        stored.append(dict(configured))
        return {**configured, "max_batch_tuples": 7}

    assert live.change(store)["max_batch_tuples"] == 7
    live.update({"max_batch_tuples": 9})
    assert seen == [100, 7, 9] and live.max_batch_tuples == 9
    assert stored == [
        {
            "max_batch_tuples": 100,
            "login_attempts_per_minute": 10,
            "ingest_tuples_per_second": 50_000,
            "max_windows_per_tuple": 1_000,
            "max_window_seconds": 7 * 24 * 3600,
            "max_join_bound_seconds": 24 * 3600,
            "max_open_windows": 100_000,
            "max_window_rows": 100_000,
            "max_state_rows": 5_000_000,
            "max_rewrite_variants": 4,
        }
    ]
    assert live.configured["max_batch_tuples"] == 100


def test_a_refused_change_puts_nothing_in_force():
    live = LiveLimits(load_settings())

    def refuse(configured):
        raise PermissionError("not an administrator")

    with pytest.raises(PermissionError):
        live.change(refuse)
    assert live.values() == dict(live.configured)


def test_an_administrators_change_is_in_force_and_the_config_unchanged(app, client, auth):
    svc = app.extensions["sluice"]
    response = client.patch(
        "/api/v1/system/settings",
        headers=auth.headers("joe"),
        json={"max_batch_tuples": 2, "ingest_tuples_per_second": 3},
    )
    assert response.status_code == 200, response.json
    assert (svc.limits.max_batch_tuples, svc.limits.ingest_tuples_per_second) == (2, 3)
    assert (svc.settings.max_batch_tuples, svc.settings.ingest_tuples_per_second) == (
        10_000,
        50_000,
    )
    assert svc.throttle.limit() == 10 and svc.rate.per_second() == 3
