"""What an experiment hands back, the one table they all print into, and the machine it ran on."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from bench.harness import Comparison

RESULTS = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True)
class Row:
    """One measured case; ``comparison`` is absent where only the secured work exists."""

    experiment: str
    case: str
    unit: str
    secured: float
    unsecured: float | None = None
    comparison: Comparison | None = None

    def overhead(self) -> str:
        """Secured cost over unsecured cost, minus one: median [spread]."""
        if self.comparison is None:
            return "-"
        lo, hi = self.comparison.spread
        return f"{percent(self.comparison.ratio)} [{percent(lo)}, {percent(hi)}]"

    def to_dict(self) -> dict:
        return {
            "experiment": self.experiment,
            "case": self.case,
            "unit": self.unit,
            "secured": self.secured,
            "unsecured": self.unsecured,
            "comparison": self.comparison.to_dict() if self.comparison else None,
        }


@dataclass(frozen=True)
class Goal:
    experiment: str
    goal: str
    measured: str
    met: bool


@dataclass
class Result:
    rows: list[Row] = field(default_factory=list)
    goals: list[Goal] = field(default_factory=list)
    extra: dict = field(default_factory=dict)  # profiles, progress numbers: JSON only


def percent(ratio: float) -> str:
    return f"{(ratio - 1) * 100:+.1f}%"


def number(value: float | None) -> str:
    if value is None:
        return "-"
    if value == 0 or 0.01 <= abs(value) < 1e6:
        return f"{value:,.3g}" if abs(value) < 100 else f"{value:,.0f}"
    return f"{value:.3g}"


def table(rows: list[Row], goals: list[Goal]) -> str:
    """A plain-text table (also valid Markdown) of every row, then every goal."""
    head = ["experiment", "case", "unit", "secured", "unsecured", "overhead median [IQR]"]
    body = [
        [r.experiment, r.case, r.unit, number(r.secured), number(r.unsecured), r.overhead()]
        for r in rows
    ]
    lines = _markdown(head, body)
    lines.append("")
    lines += _markdown(
        ["experiment", "goal", "measured", "met"],
        [[g.experiment, g.goal, g.measured, "yes" if g.met else "NO"] for g in goals],
    )
    return "\n".join(lines)


def _markdown(head: list[str], body: list[list[str]]) -> list[str]:
    widths = [max(len(str(c)) for c in column) for column in zip(head, *body, strict=False)]

    def line(cells: list[str]) -> str:
        return (
            "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=False)) + " |"
        )

    return [line(head), line(["-" * w for w in widths])] + [line(r) for r in body]


def machine() -> dict:
    """The facts a reader needs to judge the numbers: cores, memory, CPU, versions, load."""

    def run(*cmd: str) -> str:
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
            return (done.stdout + done.stderr).strip()
        except OSError as err:
            return f"unavailable ({err})"

    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    import pyspark

    return {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "nproc": os.cpu_count(),
        "memory": run("free", "-h").splitlines()[1:2],
        "cpu": cpu,
        "python": platform.python_version(),
        "java": run("java", "-version").splitlines()[0],
        "spark": pyspark.__version__,
        "load_average": os.getloadavg(),
    }


def write(name: str, payload: dict) -> Path:
    RESULTS.mkdir(exist_ok=True)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path = RESULTS / f"{name}-{stamp}.json"
    path.write_text(json.dumps(payload, indent=1, default=str))
    return path
