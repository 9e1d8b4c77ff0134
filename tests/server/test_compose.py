"""``docker-compose.yml`` cannot be run here (no Docker daemon): its servers' settings are checked
against the settings model instead, so a renamed or mistyped setting fails here, not at a
deployment."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from server.settings.config import ENV_PREFIX, Settings, load_settings

COMPOSE = Path(__file__).resolve().parents[2] / "docker-compose.yml"
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


def test_every_replica_setting_is_a_real_setting_with_a_valid_value():
    replicas = _sluice()
    assert len(replicas) == 2
    for env in replicas.values():
        names = {
            k[len(ENV_PREFIX) :].lower(): v for k, v in env.items() if k.startswith(ENV_PREFIX)
        }
        assert set(names) <= set(Settings.model_fields), set(names) - set(Settings.model_fields)
        settings = load_settings(overrides=names)  # parses each value by its declared type
        assert settings.catalog_url.startswith("postgresql://")
        assert settings.redis_url.get_secret_value() == "redis://redis:6379/0"


def test_one_replica_runs_the_runtime_and_the_worker_shares_its_data_directory():
    services = _services()
    runtime = [
        name
        for name, env in _sluice().items()
        if load_settings(overrides={"runtime": env.get("SLUICE_RUNTIME", True)}).runtime
    ]
    assert runtime == ["sluice-runtime"]  # one runtime lease between servers is not built
    env = services["sluice-runtime"]["environment"]
    assert env["SLUICE_SPARK_MASTER"] == "spark://spark-master:7077"
    assert env["SLUICE_SPARK_SECRET"] == services["spark-worker"]["environment"]["SPARK_SECRET"]
    data = f"runtime-data:{env['SLUICE_DATA_DIR']}"
    assert data in services["sluice-runtime"]["volumes"]
    assert data in services["spark-worker"]["volumes"]
    for service in services.values():
        assert set(service.get("depends_on", ())) <= set(services)
