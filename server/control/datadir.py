"""The serving process's claim on its data directory: absolute, exclusive and private.

Two processes writing one ingestion log each acknowledge tuples the other then overwrites, so
the directory is locked (``flock`` on ``sluice.lock``, released by the kernel when the process
dies, so a crash never leaves a stale lock). The path is made absolute first: Spark executors
read the logs by path from their own working directory. Everything under it (catalog with
password hashes, audit, logs, checkpoints) is for this user only: directories 0700, files
0600, and the process's umask keeps what it creates later the same.
"""

from __future__ import annotations

import fcntl
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from boxes import codes
from boxes.errors import Conflict

LOCK_FILE = "sluice.lock"
PRIVATE_UMASK = 0o077


@dataclass
class DataDir:
    """A claimed data directory; ``release`` (or the process's end) gives it up."""

    path: Path
    _fd: int

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = -1


def claim(path: Path) -> DataDir:
    """Make ``path`` absolute, private and this process's alone, or refuse with the holder."""
    path = Path(path).expanduser().resolve()
    os.umask(PRIVATE_UMASK)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
        os.close(fd)
        raise Conflict(code=codes.DATA_DIR_IN_USE, path=path, pid=holder) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    _make_private(path)
    return DataDir(path, fd)


def _make_private(root: Path) -> None:
    """Take group and other bits off what an older version or another umask left readable."""
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            mode = os.lstat(os.path.join(folder, name)).st_mode
            if mode & 0o077 and not stat.S_ISLNK(mode):
                os.chmod(os.path.join(folder, name), stat.S_IMODE(mode) & 0o700)
    if root.stat().st_mode & 0o077:
        root.chmod(stat.S_IMODE(root.stat().st_mode) & 0o700)
