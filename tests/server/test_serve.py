"""``sluice serve`` as operators run it: gunicorn, one server per data directory, private files."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import socketio
from serverkit import PASSWORD


def test_a_second_server_on_the_same_data_directory_exits_at_once(serve):
    first = serve(runtime=False, admin_user="joe", admin_password=PASSWORD)
    first.start()
    second = subprocess.run(
        [sys.executable, "-m", "server.cli.main", "serve", "--config", str(first.config)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert second.returncode == 2, second.stdout + second.stderr
    assert "DATA_DIR_IN_USE" in second.stderr and f"pid {first.process.pid}" in second.stderr
    assert str(first.data) in second.stderr
    assert first.running()


def test_served_by_gunicorn_with_private_files_and_clean_websocket_closes(serve):
    server = serve(runtime=False, admin_user="joe", admin_password=PASSWORD)
    server.start()
    import requests

    token = requests.post(
        f"{server.url}/api/v1/auth/login", json={"user": "joe", "password": PASSWORD}, timeout=30
    ).json()["token"]
    for _ in range(3):
        client = socketio.Client(reconnection=False)
        client.connect(server.url, auth={"token": token}, transports=["websocket"])
        client.disconnect()
    for path in (server.data, server.data / "catalog.sqlite", server.data / "secret_key"):
        assert stat.S_IMODE(os.stat(path).st_mode) & 0o077 == 0, path
    server.kill()
    log = server.log_path.read_text()
    assert "Using worker: gthread" in log
    assert "development server" not in log and "Bad request syntax" not in log, log[-2000:]
