"""A throwaway S3 endpoint for the tests: moto's ``ThreadedMotoServer`` on a free loopback port
(in this process, state in memory), with one bucket. Each test takes a prefix of its own."""

from __future__ import annotations

import uuid

import pyarrow.fs as pafs

BUCKET = "sluice-test"
REGION = "us-east-1"


class S3Server:
    def __init__(self) -> None:
        from moto.server import ThreadedMotoServer

        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self._server.start()
        host, port = self._server.get_host_and_port()
        self.endpoint = f"{host}:{port}"
        self.options = f"endpoint_override={self.endpoint}&scheme=http&region={REGION}"
        fs, _ = pafs.FileSystem.from_uri(self.url("") + "&allow_bucket_creation=true")
        fs.create_dir(BUCKET)

    def url(self, prefix: str) -> str:
        """``s3://`` with moto's any-will-do keys in the URL (a real deployment takes them from
        the environment or the instance's role instead)."""
        return f"s3://testing:testing@{BUCKET}/{prefix}?{self.options}"

    def url_for_new_prefix(self) -> str:
        return self.url(uuid.uuid4().hex)

    def filesystem(self) -> pafs.S3FileSystem:
        return pafs.FileSystem.from_uri(self.url(""))[0]

    def stop(self) -> None:
        self._server.stop()


def start() -> S3Server:
    return S3Server()
