"""One error shape everywhere: ``{"error": {"code", "message", "details"}}``, never a stack trace.

The HTTP status comes from the error's code, as ``boxes/codes.py`` declares it (one code, one
status), never from its message. Flask's own 404, 405 and 413 answer in the same shape;
anything unexpected is logged here and answered with a bare ``INTERNAL_ERROR`` so nothing about
the server's insides leaks to the caller.
"""

from __future__ import annotations

from flask import Flask, current_app, jsonify
from werkzeug.exceptions import HTTPException

from boxes import codes
from boxes.codes import Code
from boxes.errors import RateLimited, SluiceError, Unauthenticated

# Werkzeug's own refusals (no route, wrong method, body beyond MAX_CONTENT_LENGTH) by status;
# any other is a malformed request, or the server's failure.
WERKZEUG = {404: codes.NOT_FOUND, 405: codes.METHOD_NOT_ALLOWED, 413: codes.REQUEST_TOO_LARGE}


def body(code: Code, message: str, details: dict | None = None) -> dict:
    """The one error shape, for HTTP answers and socket.io acks alike; ``code`` registered."""
    return {"error": {"code": codes.lookup(code), "message": message, "details": details or {}}}


def _sluice(err: SluiceError):
    status = err.status
    message = err.message
    if status >= 500:
        current_app.logger.error("%s", err)
        message = message.splitlines()[0][:300] if message else err.code
    response = jsonify(body(err.code, message, err.details))
    response.status_code = status
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
    if err.code == 405 and err.valid_methods:
        response.headers["Allow"] = ", ".join(err.valid_methods)
    return response


def unexpected() -> dict:
    """Log the exception being handled; the bare answer that says nothing about it."""
    current_app.logger.exception("unexpected error")
    return body(codes.INTERNAL_ERROR, codes.INTERNAL_ERROR.render())


def _unexpected(err: Exception):
    response = jsonify(unexpected())
    response.status_code = codes.INTERNAL_ERROR.status
    return response


def init_app(app: Flask) -> None:
    app.register_error_handler(SluiceError, _sluice)
    app.register_error_handler(HTTPException, _http)
    app.register_error_handler(Exception, _unexpected)
