"""Server settings: defaults, then a YAML file, then ``SLUICE_*`` variables, then overrides.

Every setting has a default that works on a laptop (SQLite and logs under ``./data``, Spark
``local[*]``). The one thing never defaulted is the secret that signs sessions: when none is
configured, the server makes a random one on first start and keeps it in the data directory
(mode 0600), so no two installations share a secret and restarts keep sessions valid.

The settings are a frozen pydantic model: each value is parsed by its declared type (a new
``float`` or ``list[str]`` setting parses as one, with no table to extend), a bad value is an
``INVALID_SETTING`` error naming the setting, and secrets are ``SecretStr`` so they never show
in a ``repr`` or a log line. Three limits may also be changed by an administrator while the
server runs; those live in ``server.settings.limits.LiveLimits``, never here.

>>> settings = load_settings(overrides={"port": "9000", "secret_key": "x" * 32})
>>> settings.port, settings.secret_key
(9000, SecretStr('**********'))
"""

from __future__ import annotations

import os
import re
import secrets
import socket
from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from boxes import codes
from boxes.errors import InvalidInput

ENV_PREFIX = "SLUICE_"
# An absolute path or a URL with a scheme (checked for what it names when the runtime starts).
STATE_URL = re.compile(r"^(/|[A-Za-z][A-Za-z0-9+.-]*://)\S*$")
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
# Secrets copied from tutorials; refusing them keeps a forgotten setting from reaching production.
WEAK_SECRETS = frozenset({"", "dev", "secret", "secret!", "changeme", "change-me", "test"})
# The YAML file of the load in progress (settings sources are chosen per class, files per load).
_config_file: ContextVar[Path | None] = ContextVar("sluice_config_file", default=None)


class _Environment(EnvSettingsSource):
    """``SLUICE_*`` variables; a structured value (``SLUICE_SPARK_CONF``) may be YAML or JSON."""

    def decode_complex_value(self, field_name: str, field: FieldInfo, value: Any) -> Any:
        return yaml.safe_load(value)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, extra="forbid", frozen=True, validate_default=True
    )

    data_dir: Path = Path("data")
    host: str = "127.0.0.1"
    port: int = 8080
    # Sockets live in an edge process that `sluice serve` starts (server/edge/): true by default;
    # false serves them on gunicorn's threads, one per socket, `server_threads` at most.
    edge: bool = True
    server_threads: int = Field(256, ge=1)  # requests served at once (a websocket holds one)
    # Socket caps (server/realtime/sockets.py): open sockets per user and per client address; a
    # connect beyond them is refused with TOO_MANY_SOCKETS.
    max_sockets_per_user: int = Field(100, ge=1)
    max_sockets_per_address: int = Field(1_000, ge=1)
    # Result frames one socket may have waiting to be written (server/edge/): a socket further
    # behind loses the next ones and is told `missed` with the position to read back from.
    socket_queue_frames: int = Field(64, ge=1)
    # A socket open at the edge before its socket.io connect has shown no session, so no user's
    # cap counts it (server/edge/connecting.py): it must send its connect within this many
    # seconds, and one client address may hold this many such sockets at once.
    socket_connect_seconds: float = Field(10.0, gt=0)
    max_connecting_per_address: int = Field(100, ge=1)
    secret_key: SecretStr | None = None
    # sqlite:///PATH or postgresql://... (docs/deploy.md); default: a sqlite file in data_dir
    catalog_url: str | None = None
    # redis://[:PASSWORD@]HOST:6379/0 (docs/deploy.md): login throttles and ingestion rates
    # shared by the servers of one installation; default: each server counts in its own memory.
    # A secret, as it may hold the password.
    redis_url: SecretStr | None = None
    spark_master: str = "local[*]"
    spark_conf: dict[str, str] = {}  # raw Spark settings, applied last (docs/deploy.md)
    # For a master that is not local[...] (docs/deploy.md): the address executors reach the
    # driver at, fixed driver ports (0: any) for firewalls, executor memory, the Python the
    # driver's workers and executors run (the same path on every host), the shuffle partitions
    # a new diagram starts with (Spark keeps them in its checkpoint), and the shared secret
    # (default: generated into the data directory as ``spark_secret``).
    spark_driver_host: str = "127.0.0.1"
    spark_driver_port: int = Field(0, ge=0, le=65535)
    spark_block_manager_port: int = Field(0, ge=0, le=65535)
    spark_executor_memory: str = Field("1g", pattern=r"^[1-9][0-9]*[kmgt]$")
    spark_python: str | None = None
    spark_shuffle_partitions: int = Field(2, ge=1, le=10_000)
    spark_secret: SecretStr | None = None
    bcrypt_rounds: int = 12
    session_ttl_seconds: int = 8 * 3600
    max_request_bytes: int = 4 * 1024 * 1024
    max_batch_tuples: int = 10_000
    login_attempts_per_minute: int = 10
    recent_tuples: int = 200
    # result rows kept on disk per output, for subscribers who resume from a position
    result_retention_rows: int = Field(100_000, ge=1)
    reconcile_seconds: float = Field(2.0, gt=0)  # how often running queries are checked
    # count rows through each box of running diagrams (docs/editor.md); off by default, since it
    # costs throughput (1.6x the batch time at 4 filters in the worst case), on with --demo
    box_metrics: bool = False
    # run diagrams whose plans differ only in names as one (server/runtime/sharing.py)
    share_plans: bool = True
    # threads that hand every output's batches to delivery, shared by all deployed diagrams
    # (server/runtime/taps.py: as many callbacks blocked at once stop delivery meanwhile)
    delivery_threads: int = Field(4, ge=1, le=256)
    # Spark task slots the real-time queries of diagrams that ask for it (`realtime: true`) may
    # hold, all told (server/runtime/modes.py); unset: Spark's cores but one; 0: no real-time.
    realtime_slots: int | None = Field(None, ge=0)
    # A real-time query's batch: how often its checkpoint is taken, not a latency. At each end
    # Spark plans the next batch and rows arriving meanwhile wait: with 5 s batches that put
    # p99 over 100 ms at 1,000 tuples/s, with 30 s under it (docs/benchmarks.md). A longer batch
    # is a longer replay after a crash and box counts later. Spark's least is 5 s.
    realtime_batch_seconds: float = Field(30.0, ge=5.0, le=3600.0)
    deploy_timeout_seconds: float = Field(120.0, gt=0)  # a deploy's queries must be up by then
    tls_cert: Path | None = None
    tls_key: Path | None = None
    admin_user: str | None = None
    admin_password: SecretStr | None = None
    demo: bool = False
    testing: bool = False
    runtime: bool = True  # start Spark and the ingestion logs (off: REST only)
    # The runtime's files (ingestion logs, checkpoints, result logs); default DATA_DIR/runtime.
    # Servers on one catalog that may take the runtime over from each other share one
    # (docs/deploy.md "The runtime lease"): only the lease's holder touches it.
    runtime_dir: Path | None = None
    # Where deployed diagrams keep their Spark checkpoints and result logs: a local path, a
    # file:// URL or one pyarrow.fs reads (s3://bucket/prefix?region=..., gs://, hdfs://);
    # default the runtime directory. Result logs go to ``results_url`` when it is set. Secret,
    # since a URL may carry an object store's keys. docs/deploy.md "Where the state can live".
    state_url: SecretStr | None = None
    results_url: SecretStr | None = None
    # The holder renews its lease on the runtime three times in this span; another server
    # takes the runtime over once a holder has not renewed for this long.
    runtime_lease_seconds: float = Field(15.0, ge=1, le=600)
    # Where the other servers on the catalog reach this one (they forward ingestion to the
    # runtime's holder): default this server's own scheme, host and port, the host name when
    # it listens on every address.
    advertise_url: str | None = Field(None, pattern=r"^https?://[^/?#\s]+$")
    ingest_tuples_per_second: int = 50_000  # per session, for HTTP and socket ingestion together
    # Ceilings on what one diagram may cost (boxes/cost.py), for everyone: checked when a diagram
    # is validated, stored or deployed, before Spark sees it.
    max_windows_per_tuple: int = 1_000
    max_window_seconds: int = 7 * 24 * 3600
    max_join_bound_seconds: int = 24 * 3600
    max_open_windows: int = 100_000
    max_window_rows: int = 100_000  # a count window's rows: what each group key keeps
    # Checked while a diagram runs (its state depends on the data: group keys x open windows,
    # join buffers): a diagram whose state stores hold more rows is stopped.
    max_state_rows: int = 5_000_000
    # Per-reader variants of a rewritten diagram (docs/rewrite.md): how many may run per
    # diagram, and how long one runs on after its last subscriber left.
    max_rewrite_variants: int = 4
    variant_linger_seconds: float = Field(60.0, ge=0)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "INFO"
    log_format: Literal["text", "json"] = "text"  # json: one object a line, for log collectors

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """First wins: overrides, then ``SLUICE_*`` variables, then the YAML file."""
        return (
            init_settings,
            _Environment(settings_cls),
            YamlConfigSettingsSource(settings_cls, yaml_file=_config_file.get()),
        )

    @field_validator("data_dir", "runtime_dir")
    @classmethod
    def _absolute(cls, value: Path | None) -> Path | None:
        """Absolute from the start: Spark executors read the logs by path from their own
        working directory, which need not be the server's."""
        return None if value is None else value.expanduser().resolve()

    @property
    def runtime_path(self) -> Path:
        return self.runtime_dir or self.data_dir / "runtime"

    @property
    def advertised_url(self) -> str:
        if self.advertise_url:
            return self.advertise_url
        host = socket.gethostname() if self.host in ("0.0.0.0", "::", "") else self.host
        host = f"[{host}]" if ":" in host else host
        return f"{'https' if self.tls_cert else 'http'}://{host}:{self.port}"

    @field_validator("redis_url")
    @classmethod
    def _redis_scheme(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().startswith(REDIS_SCHEMES):
            raise ValueError(f"a Redis URL starts with one of {', '.join(REDIS_SCHEMES)}")
        return value

    @field_validator("state_url", "results_url")
    @classmethod
    def _state_place(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not STATE_URL.match(value.get_secret_value()):
            raise ValueError("an absolute path or a URL (file://, s3://, gs://, hdfs://...)")
        return value

    @field_validator("log_level", mode="before")
    @classmethod
    def _level_in_capitals(cls, value: Any) -> Any:
        """``debug`` and ``DEBUG`` alike, as operators write both."""
        return value.upper() if isinstance(value, str) else value

    @field_validator("spark_conf", mode="before")
    @classmethod
    def _conf_as_text(cls, value: Any) -> Any:
        """Spark takes every conf value as text; YAML reads ``partitions: 4`` as a number and
        ``enabled: true`` as a bool (Spark spells it ``true``)."""
        if isinstance(value, Mapping):
            return {
                str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in value.items()
            }
        return value

    def ensure_secret(self) -> str:
        """Return the signing secret, creating and persisting one when none is configured."""
        return self._secret(self.secret_key, "secret_key")

    def ensure_spark_secret(self) -> str:
        """Return the secret Spark's driver, master, workers and executors share, creating
        and persisting one when none is configured (the cluster is then given the file)."""
        return self._secret(self.spark_secret, "spark_secret")

    def _secret(self, configured: SecretStr | None, file_name: str) -> str:
        """A configured secret (never a well-known one), else the data directory's file of
        that name, created private with a random value on first use."""
        if configured is not None:
            secret = configured.get_secret_value()
            if secret.lower() in WEAK_SECRETS and not self.testing:
                raise InvalidInput(
                    code=codes.WEAK_SECRET, setting=file_name, details={"setting": file_name}
                )
            return secret
        path = self.data_dir / file_name
        if not path.exists():
            self.data_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_urlsafe(48))
        return path.read_text().strip()


def _problem(error: Mapping[str, Any], kind: type[Settings]) -> tuple[str, str]:
    """One validation error as (setting, sentence); a secret's value is never repeated."""
    name = str(error["loc"][0]) if error["loc"] else "settings"
    if error["type"] == "extra_forbidden":
        return name, f"unknown setting {name!r}"
    declared = kind.model_fields[name].annotation if name in kind.model_fields else None
    secret = SecretStr in (declared, *get_args(declared))
    value = "" if secret else f" {str(error['input'])[:40]!r}"
    return name, f"setting {name!r} has an invalid value{value}: {error['msg']}"


def load_settings(
    config_file: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    kind: type[Settings] = Settings,
) -> Settings:
    """Build settings (of ``kind``, a subclass in tests) from the layers, strictly: an unknown key
    is an error, not a silent typo."""
    for var in sorted(os.environ):
        name = var[len(ENV_PREFIX) :].lower()
        if var.startswith(ENV_PREFIX) and name not in kind.model_fields:
            raise InvalidInput(
                f"unknown setting {name!r} in {var}",
                code=codes.UNKNOWN_SETTING,
                details={"setting": name},
            )
    path = None if config_file is None else Path(config_file)
    if path is not None and not isinstance(yaml.safe_load(path.read_text()) or {}, Mapping):
        raise InvalidInput(f"{path} must hold a mapping of settings", code=codes.INVALID_SETTING)
    token = _config_file.set(path)
    try:
        return kind(**dict(overrides or {}))
    except ValidationError as exc:
        problems = [_problem(error, kind) for error in exc.errors()]
        code = (
            codes.UNKNOWN_SETTING
            if all(m.startswith("unknown") for _, m in problems)
            else codes.INVALID_SETTING
        )
        # from None: pydantic's own message repeats every input value, secrets included.
        raise InvalidInput(
            "; ".join(m for _, m in problems), code=code, details={"setting": problems[0][0]}
        ) from None
    finally:
        _config_file.reset(token)
