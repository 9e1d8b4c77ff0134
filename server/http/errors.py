"""One error shape everywhere: ``{"error": {"code", "message", "details"}}``, never a stack trace.

The HTTP status comes from the error's code, as ``boxes/codes/`` declares it (one code, one
status), never from its message. Flask's own 404, 405 and 413 answer in the same shape. The
server's own failures (a 5xx, and anything unexpected, answered ``INTERNAL_ERROR``) are logged
here under a new incident id; the caller gets the code, the id (``details.incident``) and the
code's public message, never a path, a Java or Python error text or a trace, so an operator can
find the detail that the client may not see.
"""

from __future__ import annotations

import logging
import secrets

from flask import Flask, jsonify
from socketio.exceptions import ConnectionRefusedError
from werkzeug.exceptions import HTTPException, MethodNotAllowed

from boxes import codes
from boxes.codes import Code
from boxes.errors import RateLimited, SluiceError, Unauthenticated

# Werkzeug's own refusals (no route, wrong method, body beyond MAX_CONTENT_LENGTH) by status;
# any other is a malformed request, or the server's failure.
WERKZEUG = {404: codes.NOT_FOUND, 405: codes.METHOD_NOT_ALLOWED, 413: codes.REQUEST_TOO_LARGE}
log = logging.getLogger(__name__)


def body(code: Code, message: str, details: dict | None = None) -> dict:
    """The one error shape, for HTTP answers and socket.io acks alike; ``code`` registered."""
    return {"error": {"code": codes.lookup(code), "message": message, "details": details or {}}}


def incident() -> str:
    """A new id for one failure, quoted to the client and written to the log beside the detail."""
    return secrets.token_hex(6)


def answer(err: SluiceError) -> dict:
    """The error as a client sees it; a 5xx is logged under an incident id and answered with
    the id and the code's public message only."""
    if err.status < 500:
        return body(err.code, err.message, err.details)
    case = incident()
    log.error("incident %s: %s %s", case, err, err.details or "", exc_info=err)
    return body(err.code, err.code.render_public(err.params, case), {"incident": case})


def refused_connect(error: dict) -> ConnectionRefusedError:
    """A socket.io connect refused with ``error`` (``answer``'s shape): its message to read,
    and the whole error as ``data``, so a client reads the code as REST gives it."""
    return ConnectionRefusedError(error["error"]["message"], error)


def _sluice(err: SluiceError):
    response = jsonify(answer(err))
    response.status_code = err.status
    if isinstance(err, RateLimited):
        response.headers["Retry-After"] = str(err.retry_after)
    if isinstance(err, Unauthenticated):
        response.headers["WWW-Authenticate"] = 'Bearer realm="sluice"'
    return response


def _http(err: HTTPException):
    status = err.code or 500
    code = WERKZEUG.get(status, codes.INVALID_INPUT if status < 500 else codes.INTERNAL_ERROR)
    response = jsonify(body(code, err.description or err.name))
    response.status_code = code.status
    if isinstance(err, MethodNotAllowed) and err.valid_methods:
        response.headers["Allow"] = ", ".join(err.valid_methods)
    return response


def unexpected() -> dict:
    """Log the exception being handled under an incident id; the answer names only the id."""
    case = incident()
    log.exception("incident %s: unexpected error", case)
    return body(
        codes.INTERNAL_ERROR, codes.INTERNAL_ERROR.render(incident=case), {"incident": case}
    )


def _unexpected(err: Exception):
    response = jsonify(unexpected())
    response.status_code = codes.INTERNAL_ERROR.status
    return response


def init_app(app: Flask) -> None:
    app.register_error_handler(SluiceError, _sluice)
    app.register_error_handler(HTTPException, _http)
    app.register_error_handler(Exception, _unexpected)
