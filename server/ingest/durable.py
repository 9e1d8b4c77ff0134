"""Durable small files: the one way the log and the runtime replace a file on disk.

A file is durable once its bytes *and* the directory entry that names it are flushed: without
the directory's fsync, a crash after ``rename`` may bring back the old name (or none). So a
replacement writes a temporary file beside the target, fsyncs it, renames it over the target
(atomic on POSIX) and fsyncs the directory; a reader sees the old content or the new, never
a mix, and a failed write leaves the target untouched and no temporary file behind.
"""

from __future__ import annotations

import os
from pathlib import Path

TEMP_SUFFIX = ".tmp"


def fsync_dir(directory: Path) -> None:
    """Flush a directory's entries (names created, renamed or deleted in it)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_dirs_durably(path: Path) -> None:
    """Create ``path`` and its missing parents, each new name flushed into its parent: a log
    or checkpoint directory that a crash could forget would take acknowledged rows with it."""
    path = Path(path)
    missing = []
    while not path.is_dir():
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        directory.mkdir(exist_ok=True)
        fsync_dir(directory.parent)


def write_durably(path: Path, text: str | bytes) -> None:
    """Replace ``path`` with ``text`` (UTF-8 if a ``str``) atomically and durably (write,
    fsync, rename, fsync dir)."""
    path = Path(path)
    tmp = path.with_name(path.name + TEMP_SUFFIX)
    try:
        with open(tmp, "wb") as f:
            f.write(text.encode() if isinstance(text, str) else text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
