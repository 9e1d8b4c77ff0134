"""``sluice serve`` as operators run it: gunicorn, one server per data directory, private files."""

from __future__ import annotations

import json
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


def _raw(port: int, request: bytes) -> tuple[int, str, dict]:
    """Send ``request`` as is; the status, content type and JSON body of the answer."""
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(request)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, payload = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers["Content-Type"], json.loads(payload)


def test_requests_gunicorn_refuses_answer_the_api_error_shape(serve):
    server = serve(runtime=False, admin_user="joe", admin_password=PASSWORD)
    server.start()
    close = b"Host: x\r\nConnection: close\r\n\r\n"
    cases = {
        "request line too long": (b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n" + close, 414),
        "query too long": (b"GET /api/v1/x?" + b"a" * 9000 + b" HTTP/1.1\r\n" + close, 414),
        "malformed request line": (b"GET /a b c HTTP/1.1\r\n" + close, 400),
        "header fields too large": (
            b"GET / HTTP/1.1\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(200)) + close,
            431,
        ),
        "path not UTF-8": (b"GET /api/v1/%ff HTTP/1.1\r\n" + close, 404),
        "path with a NUL": (b"GET /api/v1/%00/x/y/z HTTP/1.1\r\n" + close, 404),
        "wrong method": (b"DELETE /api/v1/box-types HTTP/1.1\r\n" + close, 405),
    }
    for case, (request, status) in cases.items():
        got, content_type, answer = _raw(server.port, request)
        assert (got, content_type) == (status, "application/json"), case
        assert set(answer["error"]) == {"code", "message", "details"}, case
        assert b"a" * 100 not in json.dumps(answer).encode(), case
