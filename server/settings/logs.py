"""Logging, configured once when the server starts, from the ``log_level`` and ``log_format``
settings.

Without this, Python drops everything below WARNING, so no operator ever saw an INFO line.
``json`` writes one object a line (``time``, ``level``, ``logger``, ``message``, and
``exception`` when there is one) for log collectors. py4j and Werkzeug log every bridge call
and every request at INFO; they are held at WARNING unless the level is DEBUG.
``sluice serve`` calls ``configure(settings.log_level, settings.log_format)`` before anything
else, so the app factory's own lines are seen too.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import datetime, timezone
from typing import TextIO

HANDLER = "sluice"  # the name of the one handler this module installs on the root logger
TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
CHATTY = ("py4j", "werkzeug")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def configure(level: str, fmt: str, stream: TextIO | None = None) -> logging.Handler:
    """Send records at ``level`` and above to ``stream`` (stderr) as ``fmt`` (text or json).
    Calling it again replaces this module's handler and leaves any other handler alone."""
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == HANDLER]:
        root.removeHandler(old)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.set_name(HANDLER)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT))
    root.addHandler(handler)
    root.setLevel(level)
    for name in CHATTY:
        logging.getLogger(name).setLevel(level if level == "DEBUG" else "WARNING")
    return handler
