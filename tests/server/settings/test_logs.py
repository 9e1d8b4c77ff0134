"""Logging as an operator sets it: INFO lines are written at INFO, and the JSON format gives
one parseable object a line, in a unit and from a real ``sluice serve`` process."""

from __future__ import annotations

import io
import json
import logging

import pytest

from server.settings import logs


@pytest.fixture
def root():
    """Give the root logger back as it was (pytest's own capture handlers included)."""
    logger = logging.getLogger()
    level, handlers = logger.level, list(logger.handlers)
    chatty = {name: logging.getLogger(name).level for name in logs.CHATTY}
    yield logger
    logger.handlers[:] = handlers
    logger.setLevel(level)
    for name, old in chatty.items():
        logging.getLogger(name).setLevel(old)


@pytest.mark.parametrize(
    "level, written",
    [
        ("DEBUG", ["debug", "info", "warning"]),
        ("INFO", ["info", "warning"]),
        ("WARNING", ["warning"]),
    ],
)
def test_lines_at_and_above_the_level_are_written(root, level, written):
    out = io.StringIO()
    logs.configure(level, "text", out)
    logger = logging.getLogger("server.somewhere")
    logger.debug("debug")
    logger.info("info")
    logger.warning("warning")
    lines = out.getvalue().splitlines()
    assert [line.rsplit(": ", 1)[1] for line in lines] == written
    assert " INFO server.somewhere: info" in out.getvalue() or "info" not in written


def test_json_lines_parse_with_level_logger_and_message(root):
    out = io.StringIO()
    logs.configure("INFO", "json", out)
    logging.getLogger("server.somewhere").info("applied %s=%d", "max_batch_tuples", 5)
    try:
        raise ValueError("boom")
    except ValueError:
        logging.getLogger("server.elsewhere").exception("it failed")
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert {k: first[k] for k in ("level", "logger", "message")} == {
        "level": "INFO",
        "logger": "server.somewhere",
        "message": "applied max_batch_tuples=5",
    }
    assert first["time"].endswith("+00:00")
    assert (second["level"], second["message"]) == ("ERROR", "it failed")
    assert "ValueError: boom" in second["exception"]


def test_configuring_again_replaces_only_its_own_handler(root):
    other = logging.NullHandler()
    root.addHandler(other)
    logs.configure("INFO", "text", io.StringIO())
    out = io.StringIO()
    logs.configure("INFO", "json", out)
    ours = [h for h in root.handlers if h.get_name() == logs.HANDLER]
    assert len(ours) == 1 and other in root.handlers
    logging.getLogger("x").info("once")
    assert len(out.getvalue().splitlines()) == 1


def test_sluice_serve_writes_json_info_lines(serve):
    server = serve(runtime=False, log_format="json", log_level="INFO")
    server.start()
    server.kill()
    # The log file also holds stdout: our start line and Flask's banner (" * Serving ...").
    lines = [
        line
        for line in server.log_path.read_text().splitlines()
        if not line.startswith(("Sluice on ", " * "))
    ]
    records = [json.loads(line) for line in lines]
    assert {"level": "INFO", "logger": "server.cli.serve"} in [
        {k: r[k] for k in ("level", "logger")} for r in records
    ]
    assert all(r.keys() >= {"time", "level", "logger", "message"} for r in records)
