"""One error shape everywhere: ``{"error": {"code", "message", "details"}}``, never a stack trace.

The HTTP status comes from the error's class, never from its message. Flask's own 404, 405 and
413 answer in the same shape; anything unexpected is logged here and answered with a bare
``INTERNAL_ERROR`` so nothing about the server's insides leaks to the caller.
"""
from __future__ import annotations

from typing import Any

from flask import Flask, current_app, jsonify
from werkzeug.exceptions import HTTPException

from boxes.errors import Conflict, Denied, InvalidInput, NotFound, SluiceError, Unauthenticated


class TooLarge(SluiceError):
    """A request or batch beyond the configured limits (HTTP 413)."""

    code = "REQUEST_TOO_LARGE"


class RateLimited(SluiceError):
    """Too many attempts or tuples in a short time (HTTP 429); ``retry_after`` in seconds."""

    code = "RATE_LIMITED"

    def __init__(self, message: str, retry_after: int, **kwargs: Any) -> None:
        super().__init__(message, details={"retry_after": retry_after}, **kwargs)
        self.retry_after = retry_after


class Unavailable(SluiceError):
    """The server cannot do it now, e.g. the stream runtime is not running (HTTP 503)."""

    code = "UNAVAILABLE"


STATUS = ((Unauthenticated, 401), (Denied, 403), (NotFound, 404), (Conflict, 409),
          (TooLarge, 413), (RateLimited, 429), (Unavailable, 503), (InvalidInput, 400))


def status_of(err: SluiceError) -> int:
    """By class; a bare SluiceError is the server's own failure (a query that cannot start,
    a log that cannot flush): 503, the caller may retry."""
    return next((status for cls, status in STATUS if isinstance(err, cls)), 503)


def body(code: str, message: str, details: dict | None = None) -> dict:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def _sluice(err: SluiceError):
    status = status_of(err)
    message = err.message
    if status == 503:
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
    code = (err.name or "error").upper().replace(" ", "_")
    response = jsonify(body(code, err.description or err.name))
    response.status_code = err.code or 500
    if err.code == 405 and err.valid_methods:
        response.headers["Allow"] = ", ".join(err.valid_methods)
    return response


def _unexpected(err: Exception):
    current_app.logger.exception("unexpected error")
    response = jsonify(body("INTERNAL_ERROR", "the server failed to answer; the error is logged"))
    response.status_code = 500
    return response


def init_app(app: Flask) -> None:
    app.register_error_handler(SluiceError, _sluice)
    app.register_error_handler(HTTPException, _http)
    app.register_error_handler(Exception, _unexpected)
