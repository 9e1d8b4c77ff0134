"""What an HTTP server (gunicorn, or the edge) answers a request it refused before the app saw
it: the API's ``{"error": ...}`` shape, not the server's own page."""

from __future__ import annotations

import json
import logging
from typing import Any

from boxes import codes
from server.http.errors import body, incident

log = logging.getLogger(__name__)
LIMIT_REQUEST_LINE = 8190
# gunicorn (or the edge, server/edge/process.py) answers a request it cannot parse before
# Flask sees it; these statuses answer in the API's error shape instead of the server's own
# page (the rare others, a refused proxy line, 417 or 501, keep gunicorn's page).
SERVER_ERRORS: dict[int, tuple[codes.Code, dict[str, Any]]] = {
    400: (codes.MALFORMED_REQUEST, {}),
    414: (codes.URI_TOO_LONG, {"limit": LIMIT_REQUEST_LINE}),
    431: (codes.HEADERS_TOO_LARGE, {}),
    500: (codes.INTERNAL_ERROR, {}),
}


def refusal(status: int, reason: str) -> bytes:
    """The API's ``{"error": ...}`` for a request the HTTP server refused with ``status`` (one
    of ``SERVER_ERRORS``) before the app saw it; the server's message (which may quote the
    request) is not echoed."""
    code, params = SERVER_ERRORS[status]
    details: dict[str, Any] = {}
    if status >= 500:  # the server has just logged the failure; name it for the client
        details = params = {"incident": incident()}
        log.error("incident %s: the server answered %s %s", params["incident"], status, reason)
    return json.dumps(body(code, code.render(**params), details)).encode()
