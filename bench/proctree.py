"""What a server costs the machine: memory and CPU of a process and every descendant, from /proc.

A Sluice server is a Python process, the Spark JVM it starts and the Python processes Spark
starts in turn (one source process per streaming query), so a figure for the server alone
would leave most of it out. Resident sizes (RSS) count a page shared by several processes
once in each; proportional sizes (PSS) split it among them, so their sum is what the tree
takes from the machine.
"""

from __future__ import annotations

import os
from pathlib import Path

PROC = Path("/proc")


def parents(proc: Path = PROC) -> dict[int, int]:
    """Every live process id -> its parent's id."""
    found = {}
    for entry in proc.iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:  # gone since the listing
                continue
            found[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return found


def tree(pid: int, proc: Path = PROC) -> list[int]:
    """``pid`` and its live descendants."""
    children: dict[int, list[int]] = {}
    for child, parent in parents(proc).items():
        children.setdefault(parent, []).append(child)
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(children.get(current, []))
    return found


def _kib(path: Path, field: str) -> int:
    """A ``field:  N kB`` line of a /proc file, in bytes (0 if the process is gone)."""
    try:
        text = path.read_text()
    except OSError:
        return 0
    for line in text.splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def tree_rss_bytes(pid: int, proc: Path = PROC) -> int:
    """Resident memory of ``pid`` and every descendant (shared pages counted in each)."""
    return sum(_kib(proc / str(p) / "status", "VmRSS") for p in tree(pid, proc))


def pss_bytes(pid: int, proc: Path = PROC) -> int:
    """Proportional memory of one process: its pages shared with others split among them."""
    return _kib(proc / str(pid) / "smaps_rollup", "Pss")


def anon_pss_bytes(pid: int, proc: Path = PROC) -> int:
    """The anonymous part of a process's PSS (its heap, stacks, threads): what its objects
    take, without the mapped files whose share moves with whatever else maps them."""
    return _kib(proc / str(pid) / "smaps_rollup", "Pss_Anon")


def tree_pss_bytes(pid: int, proc: Path = PROC) -> int:
    """Proportional memory of ``pid`` and every descendant: what the tree takes from the machine."""
    return sum(pss_bytes(p, proc) for p in tree(pid, proc))


def command(pid: int, proc: Path = PROC) -> str:
    """A process's command line, words joined by spaces ("" if it is gone)."""
    try:
        return (proc / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


def started(pid: int, proc: Path = PROC) -> float:
    """When a process started, in seconds since boot (``time.CLOCK_BOOTTIME``'s clock)."""
    fields = (proc / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[19]) / os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(pid: int, proc: Path = PROC) -> float:
    """User + system CPU so far of ``pid`` and its live descendants."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for p in tree(pid, proc):
        try:
            fields = (proc / str(p) / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / tick
