"""The socket.io client of docs/socketio.md, run as written against a live server: it logs in,
subscribes, prints exactly ``--count`` results of a running diagram as JSON lines and exits 0,
and exits 1 with the server's message when its subscribe is refused."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path

from serverkit import PASSWORD, Client

DOC = Path(__file__).resolve().parents[3] / "docs" / "socketio.md"
DIAGRAM = {
    "version": 1,
    "name": "watch",
    "inputs": {"quotes": {}},
    "boxes": {"big": {"type": "filter", "in": "quotes", "where": "price > 10"}},
    "outputs": {"big_quotes": {"from": "big"}},
}


def example() -> str:
    (code,) = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    return code


def lines(stream) -> queue.Queue:
    """The lines of a pipe as they come, read in a thread (so a wait can time out)."""
    out: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [out.put(line) for line in stream], daemon=True).start()
    return out


def run(live, tmp_path, output: str, *count: str) -> subprocess.Popen:
    """The documented client, as joe, following ``output``."""
    script = tmp_path / "subscribe.py"
    script.write_text(example())
    return subprocess.Popen(
        [sys.executable, str(script), live.url, "joe", output, *count],
        env={**os.environ, "SLUICE_PASSWORD": PASSWORD},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_the_documented_client_prints_count_live_results(live, tmp_path):
    joe = Client(live.url, "joe", PASSWORD)
    fields = {"t": "timestamp", "symbol": "string", "price": "long"}
    joe.call("POST", "/schemas", 201, json={"name": "q", "fields": fields, "event_time": "t"})
    joe.call("POST", "/streams", 201, json={"name": "quotes", "schema": "q"})
    joe.call("POST", "/diagrams", 201, json={"document": DIAGRAM})
    joe.call("POST", "/diagrams/watch/deploy")
    process = run(live, tmp_path, "big_quotes", "--count", "2")
    try:
        assert lines(process.stderr).get(timeout=60) == "subscribed to big_quotes\n"
        rows = [
            {"t": f"2026-01-01T00:00:0{i}Z", "symbol": s, "price": p}
            for i, (s, p) in enumerate([("A", 5), ("B", 50), ("C", 500), ("D", 5000)])
        ]
        joe.call("POST", "/streams/quotes/tuples", json=rows)  # three results in one batch
        out, _ = process.communicate(timeout=120)
    finally:
        process.kill()
        joe.close()
    printed = [json.loads(line) for line in out.splitlines()]
    assert [(r["symbol"], r["price"], r["_sources"]) for r in printed] == [
        ("B", 50, ["quotes"]),
        ("C", 500, ["quotes"]),
    ]
    assert process.returncode == 0


def test_the_documented_client_exits_1_when_refused(live, tmp_path):
    process = run(live, tmp_path, "no_such_output")
    try:
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert (process.returncode, out) == (1, "")
    assert "no_such_output" in err
