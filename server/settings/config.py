"""Server settings: embedded defaults, then a YAML file, then ``SLUICE_*`` variables, then overrides.

Every setting has a default that works on a laptop (SQLite and logs under ``./data``, Spark
``local[*]``). The one thing never defaulted is the secret that signs sessions: when none is
configured, the server makes a random one on first start and keeps it in the data directory
(mode 0600), so no two installations share a secret and restarts keep sessions valid.
Three limits may also be changed by an administrator while the server runs; such a change is
kept in the catalog and wins over these layers until reset (see ``server.settings.limits``).
"""
from __future__ import annotations

import dataclasses
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from boxes import codes
from boxes.errors import InvalidInput

ENV_PREFIX = "SLUICE_"
# Secrets copied from tutorials; refusing them keeps a forgotten setting from reaching production.
WEAK_SECRETS = frozenset({"", "dev", "secret", "secret!", "changeme", "change-me", "test"})


@dataclass
class Settings:
    data_dir: Path = Path("data")
    host: str = "127.0.0.1"
    port: int = 8080
    secret_key: str | None = None
    catalog_url: str | None = None          # default: sqlite file in data_dir
    spark_master: str = "local[*]"
    spark_conf: dict[str, str] = field(default_factory=dict)
    bcrypt_rounds: int = 12
    session_ttl_seconds: int = 8 * 3600
    max_request_bytes: int = 4 * 1024 * 1024
    max_batch_tuples: int = 10_000
    login_attempts_per_minute: int = 10
    recent_tuples: int = 200
    tls_cert: Path | None = None
    tls_key: Path | None = None
    admin_user: str | None = None
    admin_password: str | None = None
    demo: bool = False
    testing: bool = False
    runtime: bool = True                    # start Spark and the ingestion logs (off: REST only)
    ingest_tuples_per_second: int = 50_000  # per session, for HTTP and socket ingestion together

    def ensure_secret(self) -> str:
        """Return the signing secret, creating and persisting one when none is configured."""
        if self.secret_key is not None:
            if self.secret_key.lower() in WEAK_SECRETS and not self.testing:
                raise InvalidInput(code=codes.WEAK_SECRET)
            return self.secret_key
        path = self.data_dir / "secret_key"
        if not path.exists():
            self.data_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_urlsafe(48))
        self.secret_key = path.read_text().strip()
        return self.secret_key


def _coerce(name: str, raw: Any, kind: Any) -> Any:
    """Turn a YAML or environment value into the declared type of setting ``name``."""
    text = str(raw).strip()
    try:
        if kind == "int":
            return int(raw)
        if kind == "bool":
            if isinstance(raw, bool):
                return raw
            if text.lower() in ("1", "true", "yes", "on"):
                return True
            if text.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(text)
        if kind in ("Path", "Path | None"):
            return Path(text)
        if kind == "dict[str, str]":
            value = raw if isinstance(raw, Mapping) else yaml.safe_load(text)
            return {str(k): str(v) for k, v in dict(value).items()}
        return text
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"setting {name!r} has an invalid value {text[:40]!r}",
                           code=codes.INVALID_SETTING, details={"setting": name}) from exc


def load_settings(config_file: str | Path | None = None, environ: Mapping[str, str] | None = None,
                  overrides: Mapping[str, Any] | None = None) -> Settings:
    """Build settings from the layers, strictly: an unknown key is an error, not a silent typo."""
    kinds = {f.name: f.type for f in dataclasses.fields(Settings)}
    values: dict[str, Any] = {}

    def take(source: str, key: str, raw: Any) -> None:
        if key not in kinds:
            raise InvalidInput(f"unknown setting {key!r} in {source}", code=codes.UNKNOWN_SETTING,
                               details={"setting": key})
        values[key] = raw if raw is None else _coerce(key, raw, kinds[key])

    if config_file is not None:
        loaded = yaml.safe_load(Path(config_file).read_text()) or {}
        if not isinstance(loaded, Mapping):
            raise InvalidInput(f"{config_file} must hold a mapping of settings", code=codes.INVALID_SETTING)
        for key, raw in loaded.items():
            take(str(config_file), str(key), raw)
    env = os.environ if environ is None else environ
    for var, raw in env.items():
        if var.startswith(ENV_PREFIX):
            take(var, var[len(ENV_PREFIX):].lower(), raw)
    for key, raw in (overrides or {}).items():
        take("overrides", key, raw)
    return Settings(**values)
