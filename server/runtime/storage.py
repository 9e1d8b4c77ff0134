"""Where a runtime keeps its checkpoints and result logs: a local directory or any filesystem
``pyarrow.fs`` reaches by URL (``s3://``, ``gs://``, ``hdfs://``, ``file://``).

``pyarrow.fs`` rather than fsspec: pyarrow is already a dependency (every log frame is Arrow
IPC), its S3, GCS and HDFS filesystems are Arrow's own C++ clients with no further Python
package, and ``FileSystem.from_uri`` takes a filesystem's options in the URL (``s3://bucket/
prefix?endpoint_override=host:9000&scheme=http&region=...``), so one string names a place
for the server, for Spark's Python workers (a derived input reads a result log there) and
for the administrator.

A local ``Location`` is also an ``os.PathLike``, so what works on a directory (the ingestion
log's segments, the durable small files) keeps working on it unchanged.
"""

from __future__ import annotations

import contextlib
import functools
import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import pyarrow.fs as pafs

from server.ingest.durable import make_dirs_durably, write_durably

# The Hadoop filesystem Spark writes a checkpoint through, per pyarrow URL scheme: Hadoop's
# S3 client is ``s3a`` (jars hadoop-aws and the AWS SDK, not shipped with pyspark).
HADOOP_SCHEMES = {"s3": "s3a"}
# pyarrow's options Sluice sets unless the URL does: on S3, a small file in one PutObject at
# close rather than a multipart upload (three requests).
DEFAULT_OPTIONS = {"s3": {"allow_delayed_open": "true"}}


@dataclass(frozen=True)
class Location:
    """A directory (or object-key prefix) on a filesystem, and the URL that names it again."""

    url: str = field(repr=False)  # it may carry keys
    fs: pafs.FileSystem = field(repr=False)
    path: str

    @classmethod
    def of(cls, where: str | os.PathLike) -> Location:
        """A local path (``str`` or ``Path``) or a URL ``pyarrow.fs.FileSystem.from_uri`` reads."""
        if isinstance(where, Location):
            return where
        text = os.fspath(where)
        if "://" not in text:
            path = str(Path(text).expanduser().resolve())
            return cls(path, pafs.LocalFileSystem(), path)
        text = _with_defaults(text)
        fs, path = _from_uri(text)
        if isinstance(fs, pafs.LocalFileSystem):
            return cls(path, fs, path)  # a file:// URL: a local path from now on
        return cls(text, fs, path.rstrip("/"))

    @property
    def local(self) -> bool:
        return isinstance(self.fs, pafs.LocalFileSystem)

    def __fspath__(self) -> str:
        if not self.local:
            raise TypeError(f"{self.hadoop_url} is not on the local filesystem")
        return self.path

    def __str__(self) -> str:
        return self.hadoop_url

    def child(self, *parts: str) -> Location:
        path = "/".join([self.path, *parts])
        if self.local:
            return Location(path, self.fs, path)
        scheme, netloc, url_path, query, _ = urlsplit(self.url)
        url_path = "/".join([url_path.rstrip("/"), *parts])
        return Location(urlunsplit((scheme, netloc, url_path, query, "")), self.fs, path)

    @property
    def hadoop_url(self) -> str:
        """This place as Spark (Hadoop) names it (``hadoop_url``); a plain path when local."""
        return self.path if self.local else hadoop_url(self.url)

    # -- reading ---------------------------------------------------------------------------
    def exists(self) -> bool:
        return self.fs.get_file_info(self.path).type != pafs.FileType.NotFound

    def names(self) -> list[str]:
        """The names directly under this place (none if it does not exist)."""
        selector = pafs.FileSelector(self.path, allow_not_found=True)
        return [info.base_name for info in self.fs.get_file_info(selector)]

    def read_bytes(self) -> bytes:
        with self.fs.open_input_stream(self.path) as f:
            return f.read()

    def read_text(self) -> str:
        return self.read_bytes().decode()

    # -- writing ---------------------------------------------------------------------------
    def put(self, data: bytes) -> None:
        """Write this file whole: on a local disk atomically and durably (temporary file,
        fsync, rename, fsync of the directory, any new parent directory flushed into its
        own); elsewhere with one upload, which an object store makes visible only once
        complete (and which needs no directories)."""
        if self.local:
            make_dirs_durably(Path(self.path).parent)
            write_durably(Path(self.path), data)
            return
        with self.fs.open_output_stream(self.path) as f:
            f.write(data)

    def delete(self) -> None:
        """Remove this file or directory and all under it; nothing if it is not there."""
        with contextlib.suppress(FileNotFoundError):
            if self.fs.get_file_info(self.path).type == pafs.FileType.File:
                self.fs.delete_file(self.path)
            else:
                self.fs.delete_dir(self.path)


@functools.lru_cache(maxsize=256)
def _from_uri(url: str) -> tuple[pafs.FileSystem, str]:
    """One filesystem per URL in a process: a Spark source reads the same log every batch, and
    an S3 URL without a region costs a request to find the bucket's."""
    return pafs.FileSystem.from_uri(url)


def _with_defaults(url: str) -> str:
    scheme, netloc, path, query, fragment = urlsplit(url)
    given = parse_qs(query)
    missing = {k: v for k, v in DEFAULT_OPTIONS.get(scheme, {}).items() if k not in given}
    if not missing:
        return url
    query = "&".join(filter(None, [query, urlencode(missing)]))
    return urlunsplit((scheme, netloc, path, query, fragment))


def hadoop_url(url: str) -> str:
    """A pyarrow URL as Hadoop names the place: the scheme Hadoop knows it by, without
    pyarrow's options or credentials (Spark takes those from ``spark.hadoop.*`` settings).

    >>> hadoop_url("s3://key:secret@bucket/state?region=eu-west-1")
    's3a://bucket/state'
    """
    scheme, netloc, path, _, _ = urlsplit(url)
    host = netloc.rsplit("@", 1)[-1]
    return urlunsplit((HADOOP_SCHEMES.get(scheme, scheme), host, path, "", ""))
