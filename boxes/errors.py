"""Errors with stable codes, shared by every layer.

An error prints as ``[CODE] path: message`` and serialises to the API's error shape
``{"code", "message", "details"}``. Each subclass also subclasses the matching built-in
(as PySpark's errors do), so callers may catch ``ValueError`` or ``LookupError`` without
knowing Sluice. The HTTP layer maps the class, never the message, to a status.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input, located by a dotted path (``boxes.avg.window.size``)."""

    code: str
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        return f"[{self.code}] {where}{self.message}"

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "path": self.path, "message": self.message}


class SluiceError(Exception):
    """Base of every error Sluice reports to a user."""

    code = "SLUICE_ERROR"

    def __init__(self, message: str, *, code: str | None = None,
                 details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.details = dict(details or {})

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details}


class InvalidInput(SluiceError, ValueError):
    """The request or document is malformed or breaks a rule (HTTP 400)."""

    code = "INVALID_INPUT"


class NotFound(SluiceError, LookupError):
    """No such object, or one the caller may not see: the two must be indistinguishable (404)."""

    code = "NOT_FOUND"


class Conflict(SluiceError):
    """The object exists already or is in a state that forbids the change (409)."""

    code = "CONFLICT"


class Unauthenticated(SluiceError, PermissionError):
    """No valid session, or bad credentials (401). One message for every credential failure."""

    code = "UNAUTHENTICATED"


class Denied(SluiceError, PermissionError):
    """Authenticated, but the decision is deny on an object the caller may see (403)."""

    code = "PERMISSION_DENIED"


class DiagramInvalid(InvalidInput):
    """Every problem found in a document, reported at once."""

    code = "DIAGRAM_INVALID"

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        summary = "; ".join(str(p) for p in self.problems[:5])
        if len(self.problems) > 5:
            summary += f"; and {len(self.problems) - 5} more"
        super().__init__(summary or "the diagram is invalid",
                         details={"problems": [p.to_dict() for p in self.problems]})

    @property
    def codes(self) -> list[str]:
        return [p.code for p in self.problems]
