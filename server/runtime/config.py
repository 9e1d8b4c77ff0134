"""The runtime's settings: how often it looks, how much it keeps, where its state lives."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from server.ingest import Limits


@dataclass(frozen=True)
class RuntimeSettings:
    # An idle source wakes Spark this often; data ends the wait at once, and so does a stop
    # (the JVM side's channel is interruptible), so it only sets the idle CPU (bench-scale).
    poll_seconds: float = 10.0
    # A stream unmoved this long no longer holds its query's windows back (source.py, idleness)
    idle_seconds: float = 60.0
    recent_rows: int = 200  # last-N cache per output
    retain_result_rows: int = 100_000  # result rows kept on disk per output
    tap_queue: int = 64  # batches a slow tap (delivery) may fall behind, then loses
    delivery_threads: int = 4  # threads that run every tap's callback (taps.py)
    segment_bytes: int = 64 << 20
    limits: Limits = field(default_factory=Limits)
    compact_every: float = 60.0  # seconds between ingestion-log compactions
    max_restarts: int = 3  # automatic restarts of a failed diagram from its checkpoint
    restart_backoff: float = 2.0  # seconds before the first restart, doubled for each next
    deploy_timeout: float = 120.0  # how long a deploy may wait for its queries' sources
    reconcile_every: float = 2.0  # seconds between checks that every running query is alive
    box_metrics: bool = False  # count rows per box (boxes/observed.py; costs throughput)
    # Task slots real-time queries may hold, all told (``modes.py``): None, Spark's cores but
    # one; 0 turns real-time mode off. Only diagrams that ask for it (``realtime: true``) run so.
    realtime_slots: int | None = None
    # A real-time query's batch: how often its checkpoint is taken, not a latency (>= 5 s);
    # the server's setting says why its default is 30 (``server.settings.config``)
    realtime_batch_seconds: float = 30.0
    share_plans: bool = True  # diagrams whose plans differ only in names run as one (sharing.py)
    # Where checkpoints (and result logs) live, and result logs if elsewhere: a local path or a
    # URL (``storage.py``); None: the data directory, and with the checkpoints.
    state_url: str | None = None
    results_url: str | None = None

    @classmethod
    def of(cls, config: Any) -> RuntimeSettings:
        """The runtime's part of the server's settings (``server.settings.Settings``)."""
        return cls(
            recent_rows=config.recent_tuples,
            retain_result_rows=config.result_retention_rows,
            limits=Limits(max_tuples=config.max_batch_tuples),
            reconcile_every=config.reconcile_seconds,
            deploy_timeout=config.deploy_timeout_seconds,
            state_url=config.state_url and config.state_url.get_secret_value(),
            results_url=config.results_url and config.results_url.get_secret_value(),
            box_metrics=config.box_metrics or config.demo,  # the demo shows what the editor can
            share_plans=config.share_plans,
            delivery_threads=config.delivery_threads,
            realtime_slots=config.realtime_slots,
            realtime_batch_seconds=config.realtime_batch_seconds,
        )
