"""``docker-compose.yml`` cannot be run here (no Docker daemon): its servers' settings are checked
against the settings model instead, so a renamed or mistyped setting fails here, not at a
deployment."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from server.settings.config import ENV_PREFIX, Settings, load_settings

COMPOSE = Path(__file__).resolve().parents[3] / "docker-compose.yml"
VARIABLE = re.compile(r"\$\{(\w+)(:\?[^}]*)?\}")


def _services() -> dict:
    return yaml.safe_load(COMPOSE.read_text())["services"]


def _sluice() -> dict[str, dict[str, str]]:
    """Each Sluice replica's environment, ``${VAR:?...}`` replaced by a stand-in value."""
    return {
        name: {
            k: VARIABLE.sub(lambda m: f"stand-in-for-{m[1]}" * 2, str(v)) for k, v in env.items()
        }
        for name, service in _services().items()
        if "entrypoint" not in service and service.get("build") == "."
        for env in [service["environment"]]
    }


def _settings_of(env: dict[str, str]) -> dict[str, str]:
    return {k[len(ENV_PREFIX) :].lower(): v for k, v in env.items() if k.startswith(ENV_PREFIX)}


def test_every_replica_setting_is_a_real_setting_with_a_valid_value():
    replicas = _sluice()
    assert len(replicas) == 2
    for env in replicas.values():
        names = _settings_of(env)
        assert set(names) <= set(Settings.model_fields), set(names) - set(Settings.model_fields)
        settings = load_settings(overrides=names)  # parses each value by its declared type
        assert settings.catalog_url.startswith("postgresql://")
        assert settings.redis_url.get_secret_value() == "redis://redis:6379/0"


def test_every_replica_may_take_the_runtime_over_from_one_shared_runtime_directory():
    services = _services()
    replicas = _sluice()
    settings = {name: load_settings(overrides=_settings_of(env)) for name, env in replicas.items()}
    assert all(s.runtime for s in settings.values())  # the lease decides which one runs it
    shared = {s.runtime_dir for s in settings.values()}
    assert len(shared) == 1 and None not in shared
    runtime_dir = str(shared.pop())
    assert len({s.data_dir for s in settings.values()}) == 1  # the same path, each its own volume
    volumes = [set(services[name]["volumes"]) for name in replicas]
    mounts = set.intersection(*volumes)  # the volumes every replica mounts
    assert mounts
    assert [m for m in mounts if runtime_dir.startswith(m.split(":")[1] + "/")] == list(mounts)
    assert mounts <= set(services["spark-worker"]["volumes"])  # executors read it too
    assert len({frozenset(v - mounts) for v in volumes}) == len(volumes)  # own data volumes
    for name, s in settings.items():
        assert s.spark_master == "spark://spark-master:7077"
        assert s.spark_driver_host == name  # executors reach each driver by its own name
        assert s.advertised_url == f"http://{name}:8080"  # the other replica reaches it there
        env = services[name]["environment"]
        assert env["SLUICE_SPARK_SECRET"] == services["spark-worker"]["environment"]["SPARK_SECRET"]
    for service in services.values():
        assert set(service.get("depends_on", ())) <= set(services)
