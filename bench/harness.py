"""The one way every experiment compares secured and unsecured work.

Both variants run in the same process, interleaved (A B, then B A, ...) so that drift in
the machine's load hits both alike; each repetition yields a pair, and the result is the
median of the per-pair ratios with their spread, not a ratio of means that one noisy run
can swing.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TypeVar

Work = Callable[[], float]
T = TypeVar("T")


@dataclass(frozen=True)
class Mode:
    """How much an experiment runs: ``quick`` (a few minutes in all) or full, and ``scale``, a
    factor on the tuples of each batch. A ratio's spread is mostly each run's fixed jitter
    (scheduling, a collection) over the run's length, so when it is wider than a goal's margin
    a longer batch narrows it where more pairs would not. ``smallest`` (with ``quick``'s cases)
    is the test suite's: every case of every experiment, with the ``least`` each size names
    and no costly warm-up, so that a benchmark cannot stop running unseen; its numbers mean
    nothing."""

    quick: bool = False
    scale: int = 1
    smallest: bool = False

    def pick(self, quick: T, full: T, *, least: T) -> T:
        """A size (tuples, repetitions, a sweep's cases) for this mode."""
        if self.smallest:
            return least
        return quick if self.quick else full

    def tuples(self, quick: int, full: int, *, least: int) -> int:
        return self.pick(quick, full, least=least) * self.scale

    def warmup(self, runs: int) -> int:
        """Untimed runs before the timed ones: none at the smallest size, which times nothing."""
        return 0 if self.smallest else runs


@dataclass(frozen=True)
class Comparison:
    """Costs (seconds, or whatever the work returns) of each repetition, paired by index."""

    secured: tuple[float, ...]
    unsecured: tuple[float, ...]

    @property
    def ratios(self) -> list[float]:
        return [s / u for s, u in zip(self.secured, self.unsecured, strict=False)]

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios)

    @property
    def spread(self) -> tuple[float, float]:
        """Interquartile range of the ratios (min-max below four repetitions)."""
        ratios = sorted(self.ratios)
        if len(ratios) < 4:
            return ratios[0], ratios[-1]
        q1, _, q3 = statistics.quantiles(ratios, n=4, method="inclusive")
        return q1, q3

    @property
    def secured_median(self) -> float:
        return statistics.median(self.secured)

    @property
    def unsecured_median(self) -> float:
        return statistics.median(self.unsecured)

    def summary(self, secured: str, unsecured: str) -> dict:
        """A probe's one line: each side's median in ms (named ``<side>_ms``), the median ratio
        and its interquartile range, rounded for reading."""
        low, high = self.spread
        return {
            f"{secured}_ms": round(self.secured_median * 1e3, 1),
            f"{unsecured}_ms": round(self.unsecured_median * 1e3, 1),
            "ratio": round(self.ratio, 3),
            "iqr": [round(low, 3), round(high, 3)],
        }

    def to_dict(self) -> dict:
        return {
            **asdict(self),
            "ratio": self.ratio,
            "spread": list(self.spread),
            "secured_median": self.secured_median,
            "unsecured_median": self.unsecured_median,
        }


def timed(work: Callable[[], object]) -> Work:
    """Wrap work that returns nothing into work that returns its wall-clock seconds."""

    def run() -> float:
        start = time.perf_counter()
        work()
        return time.perf_counter() - start

    return run


def repeat(work: Work, reps: int, warmup: int = 1) -> list[float]:
    """Costs of ``reps`` runs of work that has no unsecured twin, after ``warmup`` untimed ones."""
    for _ in range(warmup):
        work()
    return [work() for _ in range(reps)]


def compare(secured: Work, unsecured: Work, reps: int, warmup: int = 1) -> Comparison:
    """Run both variants ``warmup`` times untimed, then ``reps`` interleaved pairs."""
    for _ in range(warmup):
        secured()
        unsecured()
    pairs = []
    for i in range(reps):
        if i % 2:
            u, s = unsecured(), secured()
        else:
            s, u = secured(), unsecured()
        pairs.append((s, u))
    return Comparison(tuple(s for s, _ in pairs), tuple(u for _, u in pairs))
