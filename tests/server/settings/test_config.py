"""Settings from their layers (embedded defaults, a YAML file, ``SLUICE_*`` variables,
overrides): every value parsed by its declared type, secrets hidden, bad values named."""

from __future__ import annotations

import pytest
import yaml
from pydantic import ValidationError

from boxes.errors import InvalidInput
from server.cli.main import main
from server.runtime import RuntimeSettings
from server.settings.config import Settings, load_settings

SECRET = "a long random secret nobody should ever see"


class Extended(Settings):
    """Settings as a future change might extend them: nothing else needs to change."""

    ratio: float = 0.5
    hosts: list[str] = []


def write(tmp_path, values: dict):
    path = tmp_path / "sluice.yaml"
    path.write_text(yaml.safe_dump(values))
    return path


def test_a_float_and_a_list_setting_parse_as_such_from_file_and_environment(tmp_path, monkeypatch):
    from_file = load_settings(
        write(tmp_path, {"ratio": "0.25", "hosts": ["a", "b"]}), kind=Extended
    )
    assert (from_file.ratio, from_file.hosts) == (0.25, ["a", "b"])
    monkeypatch.setenv("SLUICE_RATIO", "1.5")
    monkeypatch.setenv("SLUICE_HOSTS", "[c, d]")
    from_env = load_settings(kind=Extended)
    assert (from_env.ratio, from_env.hosts) == (1.5, ["c", "d"])


def test_layers_apply_in_order_file_then_environment_then_overrides(tmp_path, monkeypatch):
    path = write(
        tmp_path,
        {
            "port": 1001,
            "host": "0.0.0.0",
            "bcrypt_rounds": 5,
            "spark_conf": {"spark.sql.shuffle.partitions": 4},
        },
    )
    monkeypatch.setenv("SLUICE_HOST", "10.0.0.1")
    monkeypatch.setenv("SLUICE_BCRYPT_ROUNDS", "6")
    monkeypatch.setenv("SLUICE_LOG_LEVEL", "debug")
    settings = load_settings(path, {"bcrypt_rounds": 7})
    assert settings.log_level == "DEBUG"
    assert (settings.port, settings.host, settings.bcrypt_rounds) == (1001, "10.0.0.1", 7)
    assert settings.spark_conf == {"spark.sql.shuffle.partitions": "4"}
    assert settings.max_batch_tuples == Settings().max_batch_tuples == 10_000


def test_secrets_never_show_in_repr_or_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("SLUICE_SECRET_KEY", SECRET)
    settings = load_settings(overrides={"admin_password": SECRET, "testing": True})
    assert SECRET not in repr(settings) and SECRET not in str(settings)
    assert settings.ensure_secret() == SECRET
    assert settings.admin_password is not None
    assert settings.admin_password.get_secret_value() == SECRET
    with pytest.raises(InvalidInput) as err:
        load_settings(write(tmp_path, {"admin_password": {"nested": SECRET}}))
    assert "admin_password" in str(err.value) and SECRET not in str(err.value)
    assert err.value.__cause__ is None and err.value.__suppress_context__


def test_the_redis_url_is_a_secret_with_a_redis_scheme(monkeypatch):
    url = f"redis://:{SECRET}@cache.example.net:6379/0"
    monkeypatch.setenv("SLUICE_REDIS_URL", url)
    settings = load_settings()
    assert settings.redis_url is not None and settings.redis_url.get_secret_value() == url
    assert SECRET not in repr(settings)
    monkeypatch.setenv("SLUICE_REDIS_URL", f"http://:{SECRET}@cache.example.net/")
    with pytest.raises(InvalidInput) as err:
        load_settings()
    assert err.value.code == "INVALID_SETTING" and err.value.details == {"setting": "redis_url"}
    assert "redis://" in err.value.message and SECRET not in str(err.value)


def test_the_state_urls_are_secrets_naming_an_absolute_path_or_a_url(monkeypatch):
    key = SECRET.replace(" ", "-")
    url = f"s3://id:{key}@bucket/state?region=eu-west-1"
    monkeypatch.setenv("SLUICE_STATE_URL", url)
    monkeypatch.setenv("SLUICE_RESULTS_URL", "/srv/results")
    settings = load_settings()
    assert settings.state_url is not None and settings.state_url.get_secret_value() == url
    assert key not in repr(settings)
    # ... and the runtime a server starts is given them (``Runtime.start``)
    runtime = RuntimeSettings.of(settings)
    assert (runtime.state_url, runtime.results_url) == (url, "/srv/results")
    monkeypatch.setenv("SLUICE_RESULTS_URL", "results")  # relative to what?
    with pytest.raises(InvalidInput) as err:
        load_settings()
    assert err.value.code == "INVALID_SETTING" and err.value.details == {"setting": "results_url"}


def test_the_delivery_threads_reach_the_runtime_and_are_at_least_one(monkeypatch):
    monkeypatch.setenv("SLUICE_DELIVERY_THREADS", "2")
    assert RuntimeSettings.of(load_settings()).delivery_threads == 2
    monkeypatch.setenv("SLUICE_DELIVERY_THREADS", "0")  # no thread would deliver anything
    with pytest.raises(InvalidInput) as err:
        load_settings()
    assert err.value.details == {"setting": "delivery_threads"}


def test_the_real_time_budget_reaches_the_runtime_and_is_never_negative(monkeypatch):
    monkeypatch.setenv("SLUICE_REALTIME_SLOTS", "3")
    assert RuntimeSettings.of(load_settings()).realtime_slots == 3
    monkeypatch.setenv("SLUICE_REALTIME_SLOTS", "-1")
    with pytest.raises(InvalidInput) as err:
        load_settings()
    assert err.value.details == {"setting": "realtime_slots"}


def test_the_real_time_batch_reaches_the_runtime_and_is_at_least_sparks_least(monkeypatch):
    monkeypatch.setenv("SLUICE_REALTIME_BATCH_SECONDS", "45")
    assert RuntimeSettings.of(load_settings()).realtime_batch_seconds == 45
    monkeypatch.setenv("SLUICE_REALTIME_BATCH_SECONDS", "2")  # Spark refuses a batch under 5 s
    with pytest.raises(InvalidInput) as err:
        load_settings()
    assert err.value.details == {"setting": "realtime_batch_seconds"}


@pytest.mark.parametrize(
    "layer, setting, value",
    [
        ("environment", "port", "eighty"),
        ("file", "max_batch_tuples", "many"),
        ("file", "runtime", "perhaps"),
        ("overrides", "log_level", "LOUD"),
        ("environment", "log_format", "xml"),
    ],
)
def test_a_bad_value_is_an_error_naming_the_setting(tmp_path, monkeypatch, layer, setting, value):
    config_file, overrides = None, {}
    if layer == "environment":
        monkeypatch.setenv(f"SLUICE_{setting.upper()}", value)
    elif layer == "file":
        config_file = write(tmp_path, {setting: value})
    else:
        overrides = {setting: value}
    with pytest.raises(InvalidInput) as err:
        load_settings(config_file, overrides)
    assert err.value.code == "INVALID_SETTING"
    assert err.value.details == {"setting": setting}
    assert f"setting {setting!r} has an invalid value {value!r}" in err.value.message


@pytest.mark.parametrize("layer", ["file", "environment", "overrides"])
def test_an_unknown_setting_is_an_error_not_a_silent_typo(tmp_path, monkeypatch, layer):
    config_file, overrides = None, {}
    if layer == "environment":
        monkeypatch.setenv("SLUICE_PROT", "80")
    elif layer == "file":
        config_file = write(tmp_path, {"prot": 80})
    else:
        overrides = {"prot": 80}
    with pytest.raises(InvalidInput) as err:
        load_settings(config_file, overrides)
    assert (err.value.code, err.value.details) == ("UNKNOWN_SETTING", {"setting": "prot"})


def test_settings_are_immutable():
    settings = load_settings()
    with pytest.raises(ValidationError):
        settings.max_batch_tuples = 3  # type: ignore[misc]


def test_the_command_reports_a_bad_setting_and_exits_2(tmp_path, capsys):
    config = write(tmp_path, {"data_dir": str(tmp_path), "bcrypt_rounds": "twelve"})
    assert main(["user", "add", "root", "--admin", "--config", str(config)]) == 2
    assert (
        "[INVALID_SETTING] setting 'bcrypt_rounds' has an invalid value 'twelve'"
        in capsys.readouterr().err
    )


def test_a_relative_data_directory_becomes_absolute_at_load(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = load_settings(overrides={"data_dir": "data"})
    assert settings.data_dir == tmp_path / "data" and settings.data_dir.is_absolute()
