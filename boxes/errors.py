"""Errors with stable codes, shared by every layer.

An error prints as ``[CODE] path: message`` and serialises to the API's error shape
``{"code", "message", "details"}``. Each subclass also subclasses the matching built-in
(as PySpark's errors do), so callers may catch ``ValueError`` or ``LookupError`` without
knowing Sluice. Every code is declared in ``boxes/codes/`` with its HTTP status; an error
refuses, where it is built, a code nobody declared or one whose status is not its class's
(a 404 code is always a ``NotFound``), so ``except LookupError`` and the status agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from boxes import codes
from boxes.codes import Code


def kind_of(value: Any) -> str:
    """What a JSON or YAML value is, in a message: the user wrote a document, not Python.

    >>> kind_of(5), kind_of(None), kind_of({"a": 1}), kind_of(True)
    ('a number', 'null', 'a mapping', 'true or false')
    """
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    kinds = ((str, "text"), (dict, "a mapping"), (list, "a list"), (type(None), "null"))
    return next((kind for t, kind in kinds if isinstance(value, t)), "a value of another kind")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input, located by a dotted path (``boxes.avg.window.size``)."""

    code: str
    path: str
    message: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", codes.lookup(self.code))

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        return f"[{self.code}] {where}{self.message}"

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "path": self.path, "message": self.message}


class SluiceError(Exception):
    """Base of every error Sluice reports to a user; bare, the server's own failure (503).

    The message is ``message``, or else the code's template filled with ``params``.
    """

    code: Code = codes.SLUICE_ERROR

    def __init__(
        self,
        message: str | None = None,
        *,
        code: str | None = None,
        details: dict[str, Any] | None = None,
        **params: Any,
    ) -> None:
        resolved = type(self).code if code is None else codes.lookup(code)
        if resolved.status != type(self).code.status:
            raise TypeError(
                f"code {resolved} answers {resolved.status}; raise it as the error "
                f"class of that status, not {type(self).__name__}"
            )
        message = resolved.render(**params) if message is None else message
        super().__init__(message)
        self.code = resolved
        self.message = message
        self.details = dict(details or {})
        self.params = params

    @property
    def status(self) -> int:
        """The HTTP status, from the registry."""
        return self.code.status

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details}


class InvalidInput(SluiceError, ValueError):
    """The request or document is malformed or breaks a rule (HTTP 400)."""

    code = codes.INVALID_INPUT


class NotFound(SluiceError, LookupError):
    """No such object, or one the caller may not see: the two must be indistinguishable (404)."""

    code = codes.NOT_FOUND


class Conflict(SluiceError):
    """The object exists already or is in a state that forbids the change (409)."""

    code = codes.CONFLICT


class Unauthenticated(SluiceError, PermissionError):
    """No valid session, or bad credentials (401). One message for every credential failure."""

    code = codes.UNAUTHENTICATED


class Denied(SluiceError, PermissionError):
    """Authenticated, but the decision is deny on an object the caller may see (403)."""

    code = codes.PERMISSION_DENIED


class DiagramInvalid(InvalidInput):
    """Every problem found in a document, reported at once."""

    code = codes.DIAGRAM_INVALID

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        summary = "; ".join(str(p) for p in self.problems[:5])
        if len(self.problems) > 5:
            summary += f"; and {len(self.problems) - 5} more"
        super().__init__(
            summary or "the diagram is invalid",
            details={"problems": [p.to_dict() for p in self.problems]},
        )

    @property
    def codes(self) -> list[str]:
        return [p.code for p in self.problems]


class Gone(SluiceError):
    """What was asked for existed once and is no longer kept (HTTP 410)."""

    code = codes.RESULTS_EXPIRED


class TooLarge(SluiceError):
    """A request or batch beyond the configured limits (HTTP 413)."""

    code = codes.REQUEST_TOO_LARGE


class RateLimited(SluiceError):
    """Too many attempts or tuples in a short time (HTTP 429); ``retry_after`` in seconds."""

    code = codes.RATE_LIMITED

    def __init__(self, message: str | None = None, *, retry_after: int, **kwargs: Any) -> None:
        super().__init__(
            message, details={"retry_after": retry_after}, retry_after=retry_after, **kwargs
        )
        self.retry_after = retry_after


class TooMany(SluiceError):
    """A holder of too much at once, e.g. sockets per user or address (HTTP 429)."""

    code = codes.TOO_MANY_SOCKETS


class Unavailable(SluiceError):
    """The server cannot do it now, e.g. the stream runtime is not running (HTTP 503)."""

    code = codes.UNAVAILABLE
